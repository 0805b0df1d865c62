# order_wins.gp — heat map of traversal-order win counts (the traversal-order paper's Tables
# II-IV): one panel per dataset family, one row per (devices, episode), one column per order; a
# cell's colour and number are the graphs on which that order found the lowest best step time.
#
# Run by `placebench plot`, which writes the data files; by hand:
#   gnuplot -e "data='x.tsv'; rows='x.rows.tsv'; panels='x.panels.tsv'; cols='x.cols.tsv'; \
#               out='x.png'; term='png'; subtitle='placer placeto'" order_wins.gp
# data columns: panel row col wins graphs ties
# rows columns: panel row graphs ties devices episode label
# panels / cols: index<TAB>label

if (!exists("data") || !exists("rows") || !exists("panels") || !exists("cols") || \
    !exists("out") || !exists("term")) {
    print "order_wins.gp: set data, rows, panels, cols, out and term with -e (see the header)"
    exit status 2
}
if (!exists("subtitle")) {
    subtitle = ""
}

set datafile separator "\t"
set datafile commentschars "#"
set encoding utf8

# ---- labels and sizes from the data
stats panels using 1 nooutput
np = STATS_records
stats cols using 1 nooutput
nc = STATS_records
stats rows using 2 nooutput
nr = int(STATS_max) + 1
array ptitle[np]
array ctitle[nc]
array rtitle[nr]
array rnote[np * nr]
do for [i = 1:np] {
    stats panels every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    ptitle[i] = t
}
do for [i = 1:nc] {
    stats cols every ::(i - 1)::(i - 1) using (t = strcol(2), 0) nooutput
    ctitle[i] = t
}
# rows.tsv holds every (panel, row), panel by panel: record (p - 1) * nr + r - 1.
do for [k = 1:np * nr] {
    stats rows every ::(k - 1)::(k - 1) using (t = strcol(7), g = $3, ties = $4, 0) nooutput
    if (k <= nr) {
        rtitle[k] = t
    }
    rnote[k] = g == 0 ? "no data" : sprintf("%d graph%s%s", g, g == 1 ? "" : "s", \
                                             ties > 0 ? sprintf(", %d tie%s", ties, ties == 1 ? "" : "s") : "")
}
stats rows using 3 nooutput
maxg = STATS_max < 1 ? 1 : STATS_max

# ---- geometry in pixels
cell_w = 74
cell_h = nr >= 4 ? 34 : int(136 / nr)   # at least 136 px of cells, for the colour bar
lab_w = 120     # row labels left of each panel
note_w = 110    # "8 graphs, 1 tie" right of each panel
cbar_w = 110    # the colour bar right of the last panel
title_h = 115
tick_h = 95     # rotated order names below the cells
panel_w = lab_w + nc * cell_w + note_w
content_w = np * panel_w + cbar_w
width = content_w < 780 ? 780 : content_w
x0 = (width - content_w) / 2   # centres a narrow figure
height = title_h + nr * cell_h + tick_h

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "Sans,11" background rgb "white"
}
set output out

# Light to dark blue: a cell is as dark as the share of the row's graphs its order won.
set palette defined (0 "#f7fbff", 0.25 "#c6dbef", 0.5 "#6baed6", 0.75 "#2171b5", 1 "#08306b")
set cbrange [0:maxg]
set cblabel "graphs won" offset 0.5, 0
if (maxg <= 12) {
    set cbtics 1
}
set format cb "%g"
set style fill solid 1.0 border lc rgb "white"

bottom = tick_h * 1.0 / height
top = 1.0 - title_h * 1.0 / height
set multiplot title sprintf("Best traversal order%s\ncell: graphs on which the order found the lowest " . \
                            "best step time (mean over repeats)\nby the end of episode ep (0-based); " . \
                            "tied orders all win", subtitle eq "" ? "" : " — " . subtitle)
set xrange [-0.5:nc - 0.5]
set yrange [nr - 0.5:-0.5]
set border 0
set tics scale 0
set xtics rotate by 35 right offset 0, 0.3
set key off
unset grid

do for [p = 1:np] {
    left = (x0 + (p - 1) * panel_w + lab_w) * 1.0 / width
    set lmargin at screen left
    set rmargin at screen left + nc * cell_w * 1.0 / width
    set tmargin at screen top
    set bmargin at screen bottom
    set title ptitle[p] font ",13"
    set xtics ()
    do for [c = 1:nc] {
        set xtics add (ctitle[c] c - 1)
    }
    set ytics ()
    do for [r = 1:nr] {
        set ytics add (rtitle[r] r - 1)
    }
    unset label
    do for [r = 1:nr] {
        set label rnote[(p - 1) * nr + r] at graph 1, first (r - 1) offset 0.8, 0 left \
            font ",10" tc rgb "#555555"
    }
    if (p == np) {
        set colorbox user origin screen (x0 + np * panel_w + 20) * 1.0 / width, screen bottom \
            size screen 18.0 / width, screen top - bottom
    } else {
        unset colorbox
    }
    plot data using ($1 == p - 1 ? $3 : NaN):2:(0.5):(0.5):4 with boxxyerror fc palette, \
         data using ($1 == p - 1 ? $3 : NaN):2:(sprintf("%d", $4)):($4 > 0.55 * maxg ? 0xffffff : 0x000000) \
            with labels tc rgb variable font ",12"
}
unset multiplot
