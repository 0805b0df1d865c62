# tag_testbed.gp — TAG's testbed figures: per model, the per-iteration time of DP-NCCL,
# DP-NCCL-P, TAG and pure MCTS (TAG's Fig. 5), and the search time of the MCTS placers.
#
# Run by `placebench plot`, which writes the data file; by hand:
#   gnuplot -e "data='x.tsv'; out='x.png'; term='png'" tag_testbed.gp
# data columns: model dp-nccl dp-nccl-p tag pure-mcts (ms) tag_search_s pure-mcts_search_s
# (nan: no ok run, or for a step time out of memory: no bar, as Fig. 5's OOM)

if (!exists("data") || !exists("out") || !exists("term")) {
    print "tag_testbed.gp: set data, out and term with -e (see the header)"
    exit status 2
}

set datafile separator "\t"
set datafile commentschars "#"
set datafile missing "nan"
set encoding utf8

if (term eq "svg") {
    set terminal svg size 1100, 520 dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size 1100, 520 noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, as the other bar charts.
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set border 3
set grid ytics back lc rgb "#dddddd"
set xtics nomirror rotate by -20
set ytics nomirror
set yrange [0:*]
set key outside bottom center horizontal samplen 2

set multiplot layout 1, 2 title "TAG testbed (topology simulator): means over the runs that finished ok"
set title "per-iteration time (TAG's Fig. 5)"
set ylabel "ms"
plot data using 2:xtic(1) title "DP-NCCL" lt 1, \
     '' using 3 title "DP-NCCL-P" lt 2, \
     '' using 4 title "TAG" lt 3, \
     '' using 5 title "pure MCTS" lt 4
set title "strategy search time"
set ylabel "s"
plot data using 6:xtic(1) title "TAG" lt 3, \
     '' using 7 title "pure MCTS" lt 4
unset multiplot
