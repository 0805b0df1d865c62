# heterps_sched_time.gp — HeterPS scheduling time against the model's layers, log scale (the
# paper's Tables 2-3): one line per (method, resource types T), points at the models' layers.
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; series='x.series.tsv'; out='x.png'; term='png'" \
#           heterps_sched_time.gp
# data columns: series layers sched_s model (one block per series, two blank lines between)
# series columns: index label colour dash (colour: the method; dash: T's place among the Ts)

if (!exists("data") || !exists("series") || !exists("out") || !exists("term")) {
    print "heterps_sched_time.gp: set data, series, out and term with -e (see the header)"
    exit status 2
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

stats series using 1 nooutput
ns = STATS_records
array stitle[ns]
array scolour[ns]
array sdash[ns]
do for [i = 1:ns] {
    stats series every ::(i - 1)::(i - 1) using (t = strcol(2), c = $3, d = $4, 0) nooutput
    stitle[i] = t
    scolour[i] = int(c) + 1
    sdash[i] = int(d) + 1
}

if (term eq "svg") {
    set terminal svg size 900, 560 dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size 900, 560 noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, the same as the bars (colour: the method's place in the paper's order).
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

set title "HeterPS: scheduling time against layers (mean over the runs that finished ok)"
set xlabel "layers"
set ylabel "scheduling time (s, log scale)"
set logscale y
set format y "%.0e"
set border 3
set grid xtics ytics back lc rgb "#dddddd"
set xtics nomirror
set ytics nomirror
set offsets 0.5, 0.5, 0, 0
set key outside right top vertical samplen 2 reverse Left
plot for [i = 0:ns - 1] data index i using 2:($3 > 0 ? $3 : NaN) with linespoints \
    lt scolour[i + 1] dt sdash[i + 1] pt 7 ps 0.8 lw 1.5 title stitle[i + 1]
