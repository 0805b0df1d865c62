# heterps_bars.gp — HeterPS's monetary cost and throughput per model and method (the paper's
# Figs. 5-10 as bars): one group per (model, resource types T), one bar per method; top panel
# the mean monetary cost (USD), bottom panel the mean throughput (examples/s).
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; groups='x.groups.tsv'; series='x.series.tsv'; out='x.png'; \
#               term='png'" heterps_bars.gp
# data columns: group x method slot n_slots cost_usd throughput colour
# groups columns: group x label;  series columns: index method colour

if (!exists("data") || !exists("groups") || !exists("series") || !exists("out") || \
    !exists("term")) {
    print "heterps_bars.gp: set data, groups, series, out and term with -e (see the header)"
    exit status 2
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

# ---- labels and sizes from the data
stats groups using 1 nooutput
ng = STATS_records
stats series using 1 nooutput
ns = STATS_records
array gx[ng]
array glabel[ng]
array stitle[ns]
do for [i = 1:ng] {
    stats groups every ::(i - 1)::(i - 1) using (x = $2, t = strcol(3), 0) nooutput
    gx[i] = x
    glabel[i] = t
}
do for [i = 1:ns] {
    stats series every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    stitle[i] = t
}
stats data using 5 nooutput
slots = int(STATS_max)
stats data using 2 nooutput
xmax = STATS_max

width = int((xmax + 1) * (40 + slots * 26)) + 180
width = width < 760 ? 760 : width
height = 820

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, the same as the other charts.
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#E69F00"
set linetype 6 lc rgb "#56B4E9"
set linetype 7 lc rgb "#000000"
set linetype 8 lc rgb "#F0E442"
set linetype 9 lc rgb "#999999"
set linetype cycle 9

bw = 0.8 / slots
set boxwidth bw absolute
set style fill solid 0.85 border lc rgb "#333333"
# Bars of a group side by side, centred on the group; s is the method's colour (series index).
bx(s) = $8 == s ? $2 + ($4 - ($5 - 1) / 2.0) * bw : NaN

set xrange [-0.6:xmax + 0.6]
set border 3
set grid ytics back lc rgb "#dddddd"
set ytics nomirror
set xtics nomirror scale 0 ()
do for [g = 1:ng] {
    set xtics add (glabel[g] gx[g])
}
set key outside right top vertical samplen 2 reverse Left

set multiplot layout 2, 1 title "HeterPS: monetary cost and throughput per model and method\nbars: mean over the runs that finished ok"
set lmargin 12

set title "Monetary cost of the returned plan"
set ylabel "cost (USD)"
set yrange [0:*]
plot for [s = 0:ns - 1] data using (bx(s)):6 with boxes lt s + 1 title stitle[s + 1]

set title "Throughput of the returned plan"
set ylabel "throughput (examples/s)"
set format y "%.2g"
plot for [s = 0:ns - 1] data using (bx(s)):7 with boxes lt s + 1 title stitle[s + 1]

unset multiplot
