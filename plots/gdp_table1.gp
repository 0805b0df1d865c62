# gdp_table1.gp — GDP's Table 1 as bars: one group per (model, GPUs), one bar per method
# (GDP-one, HP, METIS, HDP) of our mean run time, the paper's run time as a black diamond on the
# same slot (none: OOM in the paper, or not a (model, GPUs) pair of the paper).  A missing bar:
# no run, every run failed, or no placement fitted in memory (OOM).
#
# Run by `placebench plot`, which writes the data file; by hand:
#   gnuplot -e "data='gdp_table1.tsv'; out='x.png'; term='png'" gdp_table1.gp
# data columns: x label ours_gdp ours_hp ours_metis ours_hdp paper_gdp paper_hp paper_metis
#   paper_hdp (seconds; NaN for none)

if (!exists("data") || !exists("out") || !exists("term")) {
    print "gdp_table1.gp: set data, out and term with -e (see the header)"
    exit status 2
}

set datafile separator "\t"
set datafile commentschars "#"
set datafile missing "NaN"
set encoding utf8

stats data using 1 nooutput
n = STATS_records
width = n * 150 + 260
width = width < 760 ? 760 : width

if (term eq "svg") {
    set terminal svg size width, 520 dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, 520 noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, the same as the other charts.
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"

bw = 0.2
set boxwidth bw absolute
set style fill solid 0.85 border lc rgb "#333333"
set border 3
set grid ytics back lc rgb "#dddddd"
set ytics nomirror
set xtics nomirror scale 0 rotate by 25 right
set xrange [-0.6:n - 0.4]
set yrange [0:*]
set ylabel "run time per training step (s)"
set key outside right top vertical samplen 2 reverse Left
set title "GDP Table 1: run time per model and method (bars: ours, mean over the runs that fit;\ndiamonds: the paper's)"

slot(m) = $1 + (m - 1.5) * bw
plot data using 1:(NaN):xtic(2) with points notitle, \
     for [m = 0:3] data using (slot(m)):(column(3 + m)) with boxes lt m + 1 \
         title word("GDP-one HP METIS HDP", m + 1), \
     for [m = 0:3] data using (slot(m)):(column(7 + m)) with points pt 13 ps 1.3 \
         lc rgb "#000000" notitle
