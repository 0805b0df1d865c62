# compare_ranks.gp — heat map of the ranks of every placer (rows) on every problem (columns) of
# a suite, by mean step time over the repeats (1 = best); the number in a cell is the rank.
#
# Run by `placebench compare`, which writes the data files; by hand:
#   gnuplot -e "data='cells.tsv'; problems='problems.tsv'; entries='entries.tsv'; \
#               out='x.png'; term='png'; subtitle='myplacer on suite quick'" compare_ranks.gp
# data columns: problem entry step_ms search_s rank user   (problem, entry: 0-based indices)
# problems / entries: index<TAB>label<TAB>short label (graph and devices)

if (!exists("data") || !exists("problems") || !exists("entries") || !exists("out") || \
    !exists("term")) {
    print "compare_ranks.gp: set data, problems, entries, out and term with -e (see the header)"
    exit status 2
}
if (!exists("subtitle")) {
    subtitle = ""
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

stats problems using 1 nooutput
np = STATS_records
stats entries using 1 nooutput
ne = STATS_records

# Rows are placers, columns problems named by their short label (graph and devices).
width = 320 + 30 * np
height = 260 + 26 * ne
if (term eq "png") {
    set terminal pngcairo size width, height font ",9" noenhanced
} else {
    set terminal svg size width, height font ",9" noenhanced
}
set output out

set title "rank (1 = best; by step time, or by monetary cost where the problem says so): " . subtitle
set xtics () rotate by 60 right scale 0
set ytics () scale 0
do for [i = 1:np] {
    stats problems every ::(i - 1)::(i - 1) using (t = strcol(3), 0) nooutput
    set xtics add (t i - 1)
}
do for [i = 1:ne] {
    stats entries every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    set ytics add (t i - 1)
}
set xrange [-0.5:np - 0.5]
set yrange [ne - 0.5:-0.5]
set size ratio (ne * 1.0) / np
set cbrange [0.5:(ne > 1 ? ne : 2) + 0.5]
set cblabel "rank"
set palette defined (0 "#1a9850", 0.5 "#ffffbf", 1 "#d73027")
unset key
plot data using 1:2:(0.5):(0.5):5 with boxxyerror fill solid 1.0 noborder lc palette, \
     data using 1:2:(sprintf("%d", $5)) with labels font ",8"
