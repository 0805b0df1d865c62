# learning_curves.gp — best step time found so far vs episode: one panel per (dataset, devices),
# one line per (placer, embedding, traversal), a band of +-1 s.d. over repeats around each line.
#
# With relative=1 (placebench plot's learning_curves_relative) the values are fractions of each
# run's initial step time and are drawn as % of it: graphs of any size weigh the same.
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; panels='x.panels.tsv'; series='x.series.tsv'; out='x.png'; term='png'" \
#           learning_curves.gp
# data columns: panel series episode mean sd min max n_graphs n_runs slot n_slots (mean, sd, min
#   and max in us, or fractions of the initial step time with relative=1)
# panels / series: index<TAB>label

if (!exists("data") || !exists("panels") || !exists("series") || !exists("out") || !exists("term")) {
    print "learning_curves.gp: set data, panels, series, out and term with -e (see the header)"
    exit status 2
}
if (!exists("relative")) {
    relative = 0
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

# ---- labels and sizes from the data
stats panels using 1 nooutput
np = STATS_records
stats series using 1 nooutput
ns = STATS_records
array ptitle[np]
array stitle[ns]
do for [i = 1:np] {
    stats panels every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    ptitle[i] = t
}
do for [i = 1:ns] {
    stats series every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    stitle[i] = t
}
stats data using ($4 + (valid(5) ? $5 : 0)) nooutput
top = STATS_max
stats data using 3 nooutput
last_episode = STATS_max

# Microseconds below 10 ms, milliseconds below 10 s, seconds above; relative values as %.
unit = top >= 1e7 ? 1e6 : (top >= 1e4 ? 1e3 : 1)
uname = unit == 1e6 ? "s" : (unit == 1e3 ? "ms" : "µs")
if (relative) {
    unit = 0.01
}

cols = np <= 1 ? 1 : (np <= 4 ? 2 : 3)
# Panels come sorted by dataset, then devices: when every dataset has the same 2-4 device counts,
# one row per dataset and one column per device count (the papers' table layout).
sep = strstrt(ptitle[1], ", ")
first_ds = sep > 0 ? ptitle[1][1:sep + 1] : ptitle[1]
per_ds = 0
do for [i = 1:np] {
    per_ds = per_ds + (strstrt(ptitle[i], first_ds) == 1 ? 1 : 0)
}
if (sep > 0 && per_ds >= 2 && per_ds <= 4 && np % per_ds == 0 && np > per_ds) {
    cols = per_ds
}
rows = int(ceil(np * 1.0 / cols))
panel_w = 520
panel_h = 360
title_h = 60
width = cols * panel_w
width = width < 720 ? 720 : width

# The leading "placer / embedding / " all series share goes into the title, once, so the legend
# shows what differs (e.g. the traversal orders).
common = ns > 1 ? stitle[1] : ""
do for [i = 2:ns] {
    while (strlen(common) > 0 && strstrt(stitle[i], common) != 1) {
        common = common[1:strlen(common) - 1]
    }
}
cut = 0
do for [k = 1:strlen(common) - 2] {
    if (common[k:k + 2] eq " / ") {
        cut = k + 2
    }
}
shared = cut > 0 ? common[1:cut - 3] : ""
if (cut > 0) {
    do for [i = 1:ns] {
        stitle[i] = stitle[i][cut + 1:strlen(stitle[i])]
    }
}
shared_note = shared eq "" ? "" : "; all series: " . shared

# As many legend columns as the longest label lets fit (about 7.5 px a character).
maxlen = 1
do for [i = 1:ns] {
    maxlen = strlen(stitle[i]) > maxlen ? strlen(stitle[i]) : maxlen
}
keycols = int(width / ((maxlen + 8) * 7.5))
keycols = keycols < 1 ? 1 : (keycols > ns ? ns : keycols)
keyrows = int(ceil(ns * 1.0 / keycols))
key_h = 30 + 22 * keyrows
height = rows * panel_h + title_h + key_h

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, then a few more; past 12 series the dash pattern changes.
set linetype 1 lc rgb "#0072B2" lw 2
set linetype 2 lc rgb "#D55E00" lw 2
set linetype 3 lc rgb "#009E73" lw 2
set linetype 4 lc rgb "#CC79A7" lw 2
set linetype 5 lc rgb "#E69F00" lw 2
set linetype 6 lc rgb "#56B4E9" lw 2
set linetype 7 lc rgb "#000000" lw 2
set linetype 8 lc rgb "#F0E442" lw 2
set linetype 9 lc rgb "#8C564B" lw 2
set linetype 10 lc rgb "#7F7F7F" lw 2
set linetype 11 lc rgb "#17BECF" lw 2
set linetype 12 lc rgb "#BCBD22" lw 2
set linetype cycle 12

fw = 1.0 / cols
fh = (1.0 - (title_h + key_h) * 1.0 / height) / rows
fkey = key_h * 1.0 / height

if (relative) {
    set multiplot title "Best step time found so far, as % of the run's initial placement (100 = no gain)\n" . \
        "lines: mean over graphs of the mean over repeats; bands: ±1 s.d. over repeats" . shared_note
} else {
    set multiplot title "Best step time found so far\nlines: mean over graphs of the mean over repeats; " . \
        "bands: ±1 s.d. over repeats" . shared_note
}
set lmargin 11
set rmargin 3
set tmargin 2.5
set bmargin 3.5
set grid back lc rgb "#dddddd" lw 1
set border 3
set xtics nomirror
if (last_episode <= 10) {
    set xtics 1
}
set ytics nomirror
set xlabel "episode"
if (relative) {
    set ylabel "best step time so far (% of initial)"
} else {
    set ylabel sprintf("best step time so far (%s)", uname)
}
set format y "%g"
set key off
# Fainter bands when many series overlap.
set style fill transparent solid (ns <= 3 ? 0.18 : 0.09) noborder

do for [p = 1:np] {
    set origin ((p - 1) % cols) * fw, fkey + (rows - 1 - int((p - 1) / cols)) * fh
    set size fw, fh
    set title ptitle[p]
    # A series absent from this panel has no valid point: its lines are skipped quietly.
    plot for [s = 0:ns - 1] data \
            using (($1 == p - 1 && $2 == s && valid(5)) ? $3 : NaN):(($4 - $5) / unit):(($4 + $5) / unit) \
            with filledcurves lc (s + 1) notitle, \
         for [s = 0:ns - 1] data \
            using (($1 == p - 1 && $2 == s) ? $3 : NaN):($4 / unit) \
            with lines lt (s + 1) dt 1 + int(s / 12) notitle, \
         for [s = 0:ns - 1] data \
            using (($1 == p - 1 && $2 == s && $3 == 0) ? $3 : NaN):($4 / unit) \
            with points lt (s + 1) pt 7 ps 0.8 notitle
}

# The shared legend, in its own strip below the panels.
set origin 0, 0
set size 1, fkey
unset title
unset border
unset tics
unset xlabel
unset ylabel
unset grid
set lmargin 2
set rmargin 2
set tmargin 0
set bmargin 0
set xrange [0:1]
set yrange [0:1]
set key center center horizontal maxcols keycols reverse Left samplen 3 spacing 1.2 width 2 noautotitle
plot for [s = 1:ns] 2 with linespoints lt s dt 1 + int((s - 1) / 12) pt 7 ps 0.6 title stitle[s]
unset multiplot
