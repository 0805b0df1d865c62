# embedding_bars.gp — one bar per graph embedding, grouped by (dataset family, devices) plus the
# mean over device counts per family: top panel the improvement over the initial placement (%),
# bottom panel the computation time (s).  The embedding paper's Tables 1-2 and Figures 4-5.
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; groups='x.groups.tsv'; datasets='x.datasets.tsv'; \
#               series='x.series.tsv'; out='x.png'; term='png'; subtitle='placer placeto'" \
#           embedding_bars.gp
# data columns: group x embedding slot n_slots improvement_pct wall_s ec n_runs n_graphs colour
# groups columns: group x dataset label;  datasets columns: index x_centre label
# series columns: index label colour
#   (colour: the embedding's place in name order, as in the learning curves, whose colours
#   these bars share)

if (!exists("data") || !exists("groups") || !exists("datasets") || !exists("series") || \
    !exists("out") || !exists("term")) {
    print "embedding_bars.gp: set data, groups, datasets, series, out and term with -e (see the header)"
    exit status 2
}
if (!exists("subtitle")) {
    subtitle = ""
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

# ---- labels and sizes from the data
stats groups using 1 nooutput
ng = STATS_records
stats datasets using 1 nooutput
nd = STATS_records
stats series using 1 nooutput
ns = STATS_records
array gx[ng]
array glabel[ng]
array dx[nd]
array dlabel[nd]
array stitle[ns]
array scolour[ns]
do for [i = 1:ng] {
    stats groups every ::(i - 1)::(i - 1) using (x = $2, t = strcol(4), 0) nooutput
    gx[i] = x
    glabel[i] = t
}
do for [i = 1:nd] {
    stats datasets every ::(i - 1)::(i - 1) using (x = $2, t = strcol(3), 0) nooutput
    dx[i] = x
    dlabel[i] = t
}
do for [i = 1:ns] {
    stats series every ::(i - 1)::(i - 1) using (t = strcol(2), c = $3, 0) nooutput
    stitle[i] = t
    scolour[i] = int(c) + 1
}
stats data using 5 nooutput
slots = int(STATS_max)
stats data using 2 nooutput
xmax = STATS_max
stats data using 6 nooutput
imp_min = STATS_min
imp_max = STATS_max

group_px = 40 + slots * 30
width = int((xmax + 1) * group_px) + 180
width = width < 760 ? 760 : width
panel_h = 340
height = 2 * panel_h + 175

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
set linetype cycle 8

bw = 0.8 / slots
set boxwidth bw absolute
set style fill solid 0.85 border lc rgb "#333333"
# Bars of a group side by side, centred on the group.
bx(s) = $3 == s ? $2 + ($4 - ($5 - 1) / 2.0) * bw : NaN

set xrange [-0.6:xmax + 0.6]
set border 3
set grid ytics back lc rgb "#dddddd"
set ytics nomirror
set xtics nomirror scale 0 ()
do for [g = 1:ng] {
    set xtics add (glabel[g] gx[g])
}
# The "mean" groups (over device counts, the paper's Figures 4-5) on a grey ground.
do for [g = 1:ng] {
    if (glabel[g] eq "mean") {
        set object g rect from gx[g] - 0.5, graph 0 to gx[g] + 0.5, graph 1 \
            fc rgb "#eeeeee" fs solid 1.0 noborder behind
    }
}
# Dataset family names under their groups.
do for [d = 1:nd] {
    set label 100 + d dlabel[d] at first dx[d], graph 0 offset 0, -2.2 center font ",13"
}

top_frac = 1.0 - 95.0 / height
mid_frac = top_frac - (panel_h * 1.0 / height)
set multiplot title sprintf("Graph embeddings%s\nbars: mean over the runs (graphs and repeats); \"mean\" groups: mean over device counts", \
                            subtitle eq "" ? "" : " — " . subtitle)
set lmargin 12
set rmargin 3

# ---- improvement over the initial placement
set origin 0, mid_frac
set size 1, top_frac - mid_frac
set tmargin 3.5
set bmargin 4.5
set title "Improvement of the best placement over the initial placement"
set ylabel "improvement (%)"
set format y "%g"
lo = imp_min < 0 ? imp_min * 1.15 : 0
set yrange [lo:imp_max > 0 ? imp_max * 1.25 : 1]
set key at screen 0.5, screen top_frac + 0.005 center bottom horizontal samplen 2 spacing 1 width 2 \
    maxrows 1 reverse Left
plot for [s = 0:ns - 1] data using (bx(s)):6 with boxes lt scolour[s + 1] title stitle[s + 1], \
     for [s = 0:ns - 1] data using (bx(s)):6:(sprintf("%.1f", $6)) \
        with labels rotate by 90 left offset 0, 0.4 font ",9" notitle

# ---- computation time
set origin 0, 0
set size 1, mid_frac
set tmargin 2.5
set bmargin 5
set title "Computation time (placer search wall time)"
set ylabel "computation time (s)"
set yrange [0:*]
set offsets 0, 0, graph 0.22, 0
set key off
plot for [s = 0:ns - 1] data using (bx(s)):7 with boxes lt scolour[s + 1] notitle, \
     for [s = 0:ns - 1] data using (bx(s)):7:(sprintf($7 < 10 ? "%.2f" : "%.1f", $7)) \
        with labels rotate by 90 left offset 0, 0.4 font ",9" notitle
unset multiplot
