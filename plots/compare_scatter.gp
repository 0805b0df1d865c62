# compare_scatter.gp — step time against search time, one panel per problem of a suite: each
# point is a placer's mean over the repeats, the compared placer drawn larger; colours name the
# placers in the last panel.
#
# Run by `placebench compare`, which writes the data files; by hand:
#   gnuplot -e "data='cells.tsv'; problems='problems.tsv'; entries='entries.tsv'; \
#               out='x.png'; term='png'; subtitle='myplacer on suite quick'" compare_scatter.gp
# data columns: problem entry step_ms search_s rank user   (problem, entry: 0-based indices)
# problems / entries: index<TAB>label<TAB>short label (graph and devices)

if (!exists("data") || !exists("problems") || !exists("entries") || !exists("out") || \
    !exists("term")) {
    print "compare_scatter.gp: set data, problems, entries, out and term with -e (see the header)"
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
array ptitle[np]
array etitle[ne]
do for [i = 1:np] {
    stats problems every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    ptitle[i] = t
}
do for [i = 1:ne] {
    stats entries every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    etitle[i] = t
}

# One panel per problem and one for the colour key, in a near-square grid.
ncols = ceil(sqrt(np + 1))
nrows = ceil((np + 1.0) / ncols)
if (term eq "png") {
    set terminal pngcairo size 360 * ncols, 280 * nrows + 40 font ",9" noenhanced
} else {
    set terminal svg size 360 * ncols, 280 * nrows + 40 font ",9" noenhanced
}
set output out

set multiplot layout nrows, ncols title "step time vs search time (mean over repeats): " . subtitle
set logscale x
set format x "%g"
set xlabel "search time (s)"
set ylabel "step time (ms)"
set grid
unset key
do for [i = 1:np] {
    set title ptitle[i]
    plot for [e = 0:ne - 1] data \
        using (($1 == i - 1 && $2 == e) ? $4 : 1/0):3:(($6 > 0) ? 2.4 : 1.2) \
        with points pt 7 ps variable lc e + 1
}

unset title
unset xlabel
unset ylabel
unset tics
unset border
unset grid
unset logscale x
set xrange [0:1]
set yrange [0:1]
set key center center Left reverse samplen 1
plot for [e = 1:ne] 2 with points pt 7 ps 1.5 lc e title etitle[e]
unset multiplot
