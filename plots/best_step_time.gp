# best_step_time.gp — grouped bars of the best step time found: one group per (dataset, devices),
# one bar per (placer, embedding, traversal), error bars of +-1 s.d. over repeats.
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; panels='x.panels.tsv'; series='x.series.tsv'; out='x.png'; term='png'" \
#           best_step_time.gp
# data columns: panel series episode(-1) mean_us sd_us min_us max_us n_graphs n_runs slot n_slots
#   (slot: the bar's place among the n_slots series present in its group)
# panels / series: index<TAB>label

if (!exists("data") || !exists("panels") || !exists("series") || !exists("out") || !exists("term")) {
    print "best_step_time.gp: set data, panels, series, out and term with -e (see the header)"
    exit status 2
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

# Microseconds below 10 ms, milliseconds below 10 s, seconds above.
unit = top >= 1e7 ? 1e6 : (top >= 1e4 ? 1e3 : 1)
uname = unit == 1e6 ? "s" : (unit == 1e3 ? "ms" : "µs")

stats data using 11 nooutput
slots = int(STATS_max)

group_px = slots * 24 + 40
width = np * group_px + 160
width = width < 900 ? 900 : width
# Rotate the group labels when the longest one would not fit under its group (about 7 px per
# character at the default font).
maxlabel = 0
do for [p = 1:np] {
    maxlabel = (strlen(ptitle[p]) > maxlabel) ? strlen(ptitle[p]) : maxlabel
}
rotate = width * 1.0 / np < 150 || maxlabel * 7.0 > 0.7 * width / np

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
height = 560 + 22 * keyrows + (rotate ? 60 : 0)

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, then a few more (the same order as learning_curves.gp); past 12 series the
# bars are hatched.
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#E69F00"
set linetype 6 lc rgb "#56B4E9"
set linetype 7 lc rgb "#000000"
set linetype 8 lc rgb "#F0E442"
set linetype 9 lc rgb "#8C564B"
set linetype 10 lc rgb "#7F7F7F"
set linetype 11 lc rgb "#17BECF"
set linetype 12 lc rgb "#BCBD22"
set linetype cycle 12

set title "Best step time found (bars: mean over graphs of the mean over repeats; error bars: ±1 s.d. over repeats)" . \
    (shared eq "" ? "" : "\nall series: " . shared)
set ylabel sprintf("best step time (%s)", uname)
set format y "%g"
set yrange [0:*]
set xrange [-0.6:np - 0.4]
set grid ytics back lc rgb "#dddddd"
set border 3
set ytics nomirror
set xtics nomirror scale 0 ()
do for [p = 1:np] {
    set xtics add (ptitle[p] p - 1)
}
if (rotate) {
    set xtics rotate by 30 right
    # A rotated label reaches left of its bar group: leave room for the first one.
    set lmargin (maxlabel * 0.8 > 10 ? maxlabel * 0.8 : 10)
}
set xlabel "dataset, devices" offset 0, -0.2
set key below center horizontal height 1 maxcols keycols reverse Left samplen 2 spacing 1.2 width 2
set style fill solid 0.85 border lc rgb "#333333"
set errorbars lc rgb "#222222" lw 1.2
bw = 0.8 / slots
set boxwidth bw absolute
# Bars of a group side by side, centred on the group.
x(s) = $2 == s ? $1 + ($10 - ($11 - 1) / 2.0) * bw : NaN

# (gnuplot reads an empty loop's title once, hence the guarded index below.)
plot for [s = 0:(ns < 12 ? ns : 12) - 1] data \
        using (x(s)):($4 / unit):(valid(5) ? $5 / unit : 0) \
        with boxerrorbars lt (s + 1) title stitle[s + 1], \
     for [s = 12:ns - 1] data \
        using (x(s)):($4 / unit):(valid(5) ? $5 / unit : 0) \
        with boxerrorbars lt (s + 1) fs pattern 2 border lc rgb "#333333" \
        title stitle[s < ns ? s + 1 : 1]
