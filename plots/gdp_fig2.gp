# gdp_fig2.gp — GDP's Figure 2 (hold-out generalisation) as bars: one group per graph, one bar per
# method of our step time: HP, HDP, GDP-one, GDP-generalization + fine-tune, zero-shot, and
# GDP-batch (trained on the whole set).  The paper prints no figures for Figure 2, only its
# ordering (fine-tune and zero-shot below HP and HDP, slightly above GDP-one).
#
# Written by configs/repro/gdp-batch.sh; by hand:
#   gnuplot -e "data='gdp_fig2.tsv'; out='x.png'; term='png'" gdp_fig2.gp
# data columns: x graph HP HDP GDP-one finetune zeroshot GDP-batch (seconds; NaN for none)

if (!exists("data") || !exists("out") || !exists("term")) {
    print "gdp_fig2.gp: set data, out and term with -e (see the header)"
    exit status 2
}

set datafile separator "\t"
set datafile commentschars "#"
set datafile missing "NaN"
set encoding utf8

stats data using 1 nooutput
n = STATS_records
width = n * 200 + 260
width = width < 760 ? 760 : width

if (term eq "svg") {
    set terminal svg size width, 520 dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, 520 noenhanced font "Sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, as the other charts.
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#E69F00"
set linetype 6 lc rgb "#56B4E9"

bw = 0.13
set boxwidth bw absolute
set style fill solid 0.85 border rgb "black"
set key outside top center horizontal
set ylabel "step time (s), topology simulator, 2 P100s"
set yrange [0:*]
set xrange [-0.6:n - 0.4]
set grid ytics
set title "GDP Figure 2: pre-trained on the other graphs, then fine-tuned or zero-shot"

names = "HP HDP GDP-one fine-tune zero-shot GDP-batch"
plot data using 1:(NaN):xtic(2) with points notitle, \
    for [k = 0:5] data using ($1 + (k - 2.5) * bw):(column(k + 3)) with boxes lt (k + 1) \
    title word(names, k + 1)
