#!/usr/bin/env bash
# plot_paper_tables.sh — placebench plot's paper-table charts (order_wins heat map, embedding_bars)
# on results files built by hand, whose win counts and bar heights are derived below.
set -euo pipefail
: "${PB_BIN:?set PB_BIN to the placebench binary}" "${PB_TESTDATA:?set PB_TESTDATA to tests/data}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The schema, meta and experiment rows of the hand-written sample (kept in step with store.c).
schema() {
    sed -n '/^BEGIN;/,/^INSERT INTO experiment/p' "$PB_TESTDATA/sample_results.sql"
}

# run ID DATASET GRAPH DEVICES EMBEDDING TRAVERSAL REPEAT INITIAL BEST WALL: one ok placeto run
# ('' for an absent embedding or traversal).
run() {
    local emb=NULL trav=NULL
    [ -z "$5" ] || emb="'$5'"
    [ -z "$6" ] || trav="'$6'"
    echo "INSERT INTO runs(run_id, experiment, settings_json, dataset, graph, graph_checksum,
      n_nodes, n_devices, cluster, simulator, simulator_version, placer, placer_version,
      embedding, embedding_version, traversal, traversal_version, repeat, seed,
      placebench_version, status, error, initial_us, best_us, search_wall_s, sim_calls,
      started_at, finished_at) VALUES ('$1', 'sample', '{}', '$2', '$3', 'c', 5, $4, 'k80',
      'placeto', '1.0', 'placeto', '1.0', $emb, '1.0', $trav, '1.0', $7, '1', '0.1.0', 0, NULL,
      $8, $9, ${10}, 100, 1700000000, 1700000100);"
}

# ---------------------------------------------------------------- order wins
#
# Orders topo, bfs, reversed-topo (the paper's column order puts them as topo, reversed-topo,
# bfs: columns 0, 1, 2).  Each run's curve has episodes 0-19: best so far V9 up to episode 9,
# V19 from episode 10 on.  Means over repeats (lowest wins):
#   cifar10, 3 devices, g1: ep 9:  topo (100+120)/2 = 110, bfs 105, rev (90+140)/2 = 115 -> bfs
#                           ep 19: topo 100, bfs (105+103)/2 = 104, rev (90+100)/2 = 95 -> rev
#                       g2: ep 9:  topo 50, bfs 50, rev 60 -> topo and bfs tie (1 tie)
#                           ep 19: topo 50, bfs (50+46)/2 = 48, rev 49 -> bfs
#   so (3 dev, ep 9): topo 1, rev 0, bfs 2, graphs 2, ties 1;
#      (3 dev, ep 19): topo 0, rev 1, bfs 1, graphs 2, ties 0.
#   nmt, 5 devices, g3 (one repeat): ep 9: topo 30, bfs 25, rev 35 -> bfs
#                                    ep 19: topo 20, bfs 25, rev 15 -> rev
# Rows are the (devices, episode) pairs with data anywhere: (3, 9) 0, (3, 19) 1, (5, 9) 2,
# (5, 19) 3 (no run reaches episode 49); panels cifar10 0, nmt 1.
orders_db="$tmp/orders.db"
{
    schema
    echo "CREATE TEMP TABLE pts(run_id TEXT, v9 REAL, v19 REAL);"
    n=0
    # order-run DATASET GRAPH DEVICES ORDER REPEAT V9 V19
    order_run() {
        n=$((n + 1))
        run "o$n" "$1" "$2" "$3" placeto-gnn "$4" "$5" 200 "$7" 10
        echo "INSERT INTO pts VALUES ('o$n', $6, $7);"
    }
    order_run datasets/cifar10 g1 3 topo 0 100 100
    order_run datasets/cifar10 g1 3 topo 1 120 100
    order_run datasets/cifar10 g1 3 bfs 0 105 105
    order_run datasets/cifar10 g1 3 bfs 1 105 103
    order_run datasets/cifar10 g1 3 reversed-topo 0 90 90
    order_run datasets/cifar10 g1 3 reversed-topo 1 140 100
    order_run datasets/cifar10 g2 3 topo 0 50 50
    order_run datasets/cifar10 g2 3 topo 1 50 50
    order_run datasets/cifar10 g2 3 bfs 0 50 50
    order_run datasets/cifar10 g2 3 bfs 1 50 46
    order_run datasets/cifar10 g2 3 reversed-topo 0 60 49
    order_run datasets/cifar10 g2 3 reversed-topo 1 60 49
    order_run datasets/nmt g3 5 topo 0 30 20
    order_run datasets/nmt g3 5 bfs 0 25 25
    order_run datasets/nmt g3 5 reversed-topo 0 35 15
    echo "INSERT INTO curve(run_id, episode, episode_best_us, best_so_far_us, sim_calls, wall_s)
      WITH RECURSIVE ep(e) AS (SELECT 0 UNION ALL SELECT e + 1 FROM ep WHERE e < 19)
      SELECT run_id, e, CASE WHEN e <= 9 THEN v9 ELSE v19 END,
             CASE WHEN e <= 9 THEN v9 ELSE v19 END, 10 * (e + 1), e + 1.0
      FROM pts CROSS JOIN ep;"
    echo "COMMIT;"
} | sqlite3 "$orders_db"

"$PB_BIN" plot "$orders_db" --out "$tmp/o" >"$tmp/o.out" 2>"$tmp/o.err" ||
    fail "plot on the orders file: $(cat "$tmp/o.err")"
for f in order_wins.png order_wins.svg order_wins.tsv order_wins.rows.tsv order_wins.panels.tsv \
    order_wins.cols.tsv learning_curves_relative.png learning_curves_relative.tsv; do
    [ -s "$tmp/o/$f" ] || fail "plot did not write $f"
    grep -qxF "$tmp/o/$f" "$tmp/o.out" || fail "plot did not name $f on stdout"
done
[ "$(head -c 8 "$tmp/o/order_wins.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    fail "order_wins.png is not a PNG"
grep -q "<svg" "$tmp/o/order_wins.svg" || fail "order_wins.svg is not SVG"
# One embedding only: no bars, and stderr says why.
[ ! -e "$tmp/o/embedding_bars.png" ] || fail "embedding_bars drawn from one embedding"
grep -qF "no embedding_bars chart" "$tmp/o.err" || fail "no note on the missing embedding bars"

cat >"$tmp/cells.expected" <<'EOF'
0	0	0	1	2	1
0	0	1	0	2	1
0	0	2	2	2	1
0	1	0	0	2	0
0	1	1	1	2	0
0	1	2	1	2	0
1	2	0	0	1	0
1	2	1	0	1	0
1	2	2	1	1	0
1	3	0	0	1	0
1	3	1	1	1	0
1	3	2	0	1	0
EOF
grep -v '^#' "$tmp/o/order_wins.tsv" | diff "$tmp/cells.expected" - || fail "order_wins.tsv counts"
cat >"$tmp/rows.expected" <<'EOF'
0	0	2	1	3	9	3 dev, ep 9
0	1	2	0	3	19	3 dev, ep 19
0	2	0	0	5	9	5 dev, ep 9
0	3	0	0	5	19	5 dev, ep 19
1	0	0	0	3	9	3 dev, ep 9
1	1	0	0	3	19	3 dev, ep 19
1	2	1	0	5	9	5 dev, ep 9
1	3	1	0	5	19	5 dev, ep 19
EOF
grep -v '^#' "$tmp/o/order_wins.rows.tsv" | diff "$tmp/rows.expected" - || fail "order_wins rows"
printf '0\ttopo\n1\treversed-topo\n2\tbfs\n' | diff - <(grep -v '^#' "$tmp/o/order_wins.cols.tsv") ||
    fail "order_wins columns not in the paper's order"
printf '0\tcifar10\n1\tnmt\n' | diff - <(grep -v '^#' "$tmp/o/order_wins.panels.tsv") ||
    fail "order_wins panels"
# Relative learning curve of (cifar10, 3 devices, topo) at episode 0: graphs g1 (100/200 and
# 120/200: mean 0.55) and g2 (50/200 twice: 0.25) -> 0.4; panel 0, series 2 (bfs, rev, topo).
awk -F'\t' '$1 == 0 && $2 == 2 && $3 == 0 { n++; d = $4 - 0.4; bad = d < -1e-12 || d > 1e-12 }
    END { exit bad || n != 1 }' "$tmp/o/learning_curves_relative.tsv" ||
    fail "relative learning curve data"

# A second embedding with orders: one heat map per embedding.
{
    echo "BEGIN;"
    run x1 datasets/nmt g3 5 pgnn topo 0 200 20 10
    run x2 datasets/nmt g3 5 pgnn bfs 0 200 30 10
    echo "INSERT INTO curve(run_id, episode, episode_best_us, best_so_far_us, sim_calls, wall_s)
      WITH RECURSIVE ep(e) AS (SELECT 0 UNION ALL SELECT e + 1 FROM ep WHERE e < 9)
      SELECT run_id, e, best_us, best_us, 10, 1.0 FROM runs CROSS JOIN ep
      WHERE run_id IN ('x1', 'x2');"
    echo "COMMIT;"
} | sqlite3 "$orders_db"
"$PB_BIN" plot "$orders_db" --out "$tmp/o2" --format png >"$tmp/o2.out" 2>"$tmp/o2.err" ||
    fail "plot with two embeddings: $(cat "$tmp/o2.err")"
for e in pgnn placeto-gnn; do
    [ -s "$tmp/o2/order_wins-$e.png" ] || fail "no order_wins-$e.png"
done
# pgnn, nmt, 5 devices, g3, ep 9: topo 20 beats bfs 30 (columns topo 0, bfs 1).
printf '0\t0\t0\t1\t1\t0\n0\t0\t1\t0\t1\t0\n' |
    diff - <(grep -v '^#' "$tmp/o2/order_wins-pgnn.tsv") || fail "order_wins-pgnn counts"

# ---------------------------------------------------------------- embedding bars
#
# Initial step time 100 (ptb: 200), no traversal.  Embeddings in the paper's order: placeto-gnn 0,
# graphsage 1, pgnn 2.  Improvement (initial - best) / initial * 100, time = search wall seconds:
#   cifar10 3 dev: placeto-gnn g1 20 %, 10 s and g2 30 %, 20 s -> 25 %, 15 s;
#                  graphsage 10 %, 4 s; pgnn 40 %, 30 s
#   cifar10 5 dev: placeto-gnn 50 %, 5 s; graphsage 20 %, 6 s; pgnn 30 %, 9 s
#   cifar10 mean over devices: placeto-gnn 37.5 %, 10 s; graphsage 15 %, 5 s; pgnn 35 %, 19.5 s
#   ptb 3 dev: placeto-gnn 25 %, 100 s; pgnn 50 %, 120 s
#   ptb 5 dev: placeto-gnn 50 %, 50 s (no pgnn run)
#   ptb mean over devices: placeto-gnn 37.5 %, 75 s; no pgnn bar (it lacks 5 devices)
# Groups at x 0, 1, 2 (cifar10 3 dev, 5 dev, mean), then a 0.6 gap: ptb 3 dev, 5 dev, mean at
# 3.6, 4.6, 5.6; the datasets' centres 1 and 4.6.
emb_db="$tmp/emb.db"
{
    schema
    run e1 datasets/cifar10 g1 3 placeto-gnn '' 0 100 80 10
    run e2 datasets/cifar10 g2 3 placeto-gnn '' 0 100 70 20
    run e3 datasets/cifar10 g1 3 graphsage '' 0 100 90 4
    run e4 datasets/cifar10 g1 3 pgnn '' 0 100 60 30
    run e5 datasets/cifar10 g1 5 placeto-gnn '' 0 100 50 5
    run e6 datasets/cifar10 g1 5 graphsage '' 0 100 80 6
    run e7 datasets/cifar10 g1 5 pgnn '' 0 100 70 9
    run e8 datasets/ptb g1 3 placeto-gnn '' 0 200 150 100
    run e9 datasets/ptb g1 3 pgnn '' 0 200 100 120
    run e10 datasets/ptb g1 5 placeto-gnn '' 0 200 100 50
    echo "COMMIT;"
} | sqlite3 "$emb_db"
"$PB_BIN" plot "$emb_db" --out "$tmp/e" >"$tmp/e.out" 2>"$tmp/e.err" ||
    fail "plot on the embeddings file: $(cat "$tmp/e.err")"
for f in embedding_bars.png embedding_bars.svg embedding_bars.tsv embedding_bars.groups.tsv \
    embedding_bars.datasets.tsv embedding_bars.series.tsv; do
    [ -s "$tmp/e/$f" ] || fail "plot did not write $f"
    grep -qxF "$tmp/e/$f" "$tmp/e.out" || fail "plot did not name $f on stdout"
done
[ ! -e "$tmp/e/order_wins.png" ] || fail "order_wins drawn without traversal orders"
grep -qF "no order_wins chart" "$tmp/e.err" || fail "no note on the missing heat map"
# group x embedding slot n_slots improvement_pct wall_s (compared to 1e-9)
cat >"$tmp/bars.expected" <<'EOF'
0 0 0 0 3 25 15
0 0 1 1 3 10 4
0 0 2 2 3 40 30
1 1 0 0 3 50 5
1 1 1 1 3 20 6
1 1 2 2 3 30 9
2 2 0 0 3 37.5 10
2 2 1 1 3 15 5
2 2 2 2 3 35 19.5
3 3.6 0 0 2 25 100
3 3.6 2 1 2 50 120
4 4.6 0 0 1 50 50
5 5.6 0 0 1 37.5 75
EOF
grep -v '^#' "$tmp/e/embedding_bars.tsv" | cut -f1-7 | paste - "$tmp/bars.expected" | awk -F'\t' '
    { split($8, want, " "); if (NF != 8) bad = 1
      for (i = 1; i <= 7; i++) { d = $i - want[i]; if (d < -1e-9 || d > 1e-9) bad = 1 } }
    END { exit bad || NR != 13 }' || {
    cat "$tmp/e/embedding_bars.tsv" >&2
    fail "embedding_bars.tsv values"
}
printf '0\t0\t0\t3 dev\n1\t1\t0\t5 dev\n2\t2\t0\tmean\n3\t3.6\t1\t3 dev\n4\t4.6\t1\t5 dev\n5\t5.6\t1\tmean\n' |
    diff - <(grep -v '^#' "$tmp/e/embedding_bars.groups.tsv") || fail "embedding_bars groups"
printf '0\t1\tcifar10\n1\t4.6\tptb\n' |
    diff - <(grep -v '^#' "$tmp/e/embedding_bars.datasets.tsv") || fail "embedding_bars datasets"
printf '0\tplaceto-gnn\t2\n1\tgraphsage\t0\n2\tpgnn\t1\n' |
    diff - <(grep -v '^#' "$tmp/e/embedding_bars.series.tsv") || fail "embedding_bars series"

echo "plot_paper_tables: ok"
