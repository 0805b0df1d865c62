# report --tables orders/embeddings on small real sweeps: the win counts and embedding means in
# the CSV equal an independent computation from the runs and curves (python's sqlite3), and
# run --sample runs exactly K runs of the sweep, which a full run then skips.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
export OPENBLAS_NUM_THREADS=1

mkdir fam
for i in 01 06 08; do cp "$PB_TESTDATA/sim/ref-$i.graph.json" "fam/g$i.json"; done
cat > orders.lua <<'LUA'
return experiment {
  name = "orders", datasets = { "fam" }, devices = { 2, 3 }, simulator = "placeto",
  placer = { "placeto", "single-device" }, embedding = "placeto-gnn",
  traversal = { "topo", "lexico", "bfs" }, episodes = 4, repeats = 2, seed = 5,
}
LUA
# 3 graphs x 2 device counts x (placeto: 3 orders x 2 repeats; single-device: 2 repeats) = 48
"$PB_BIN" run orders.lua --quiet -j 2 --sample 10 > sample.out
[ "$(sql results/orders.db 'select count(*) from runs')" = 10 ] || fail "--sample 10 stored $(sql results/orders.db 'select count(*) from runs') runs"
grep -q "sample of 10 of 48 runs (seed 5): 10 ran" sample.out || fail "sample summary: $(cat sample.out)"
"$PB_BIN" run orders.lua -j 2 2> full.err
grep -q "10 of 48 runs already in the results file; 38 to run" full.err || fail "full run after the sample: $(cat full.err)"

"$PB_BIN" report results/orders.db --tables orders --episodes 0,3 --csv > wins.csv
python3 - results/orders.db wins.csv <<'PY' || fail "order win counts differ from the independent count"
import csv, sqlite3, sys, collections
db = sqlite3.connect(sys.argv[1])
expect = collections.Counter()
for ep in (0, 3):
    vals = collections.defaultdict(list)
    for dev, graph, order, v in db.execute(
            "select r.n_devices, r.graph, r.traversal, min(c.best_so_far_us) from runs r "
            "join curve c using(run_id) where r.placer = 'placeto' and r.status = 0 "
            "and c.episode = ? group by r.run_id", (ep,)):
        vals[(dev, graph, order)].append(v)
    per_graph = collections.defaultdict(dict)
    for (dev, graph, order), v in vals.items():
        per_graph[(dev, graph)][order] = sum(v) / len(v)
    for (dev, graph), means in per_graph.items():
        best = min(means.values())
        for order, m in means.items():
            expect[(dev, ep, order)] += m == best
got = collections.Counter()
for row in csv.DictReader(open(sys.argv[2])):
    assert row["family"] == "fam", row
    assert row["graphs"] == "3", row
    got[(int(row["devices"]), int(row["episode"]), row["order"])] = int(row["wins"])
keys = set(expect) | set(got)
bad = [(k, expect[k], got[k]) for k in sorted(keys) if expect[k] != got[k]]
print("\n".join(map(str, bad)), file=sys.stderr)
sys.exit(1 if bad or not keys else 0)
PY
"$PB_BIN" report results/orders.db > auto.md
grep -q "## Traversal orders" auto.md || fail "automatic report lacks the orders tables"

cat > emb.lua <<'LUA'
return experiment {
  name = "emb", datasets = { "fam" }, devices = { 2, 3 }, simulator = "placeto",
  placer = "placeto", embedding = { "placeto-gnn", "graphsage" }, episodes = 2, seed = 5,
}
LUA
"$PB_BIN" run emb.lua --quiet -j 2
"$PB_BIN" report results/emb.db --tables embeddings --csv > emb.csv
python3 - results/emb.db emb.csv <<'PY' || fail "embedding means differ from the independent computation"
import csv, sqlite3, sys, collections
db = sqlite3.connect(sys.argv[1])
cells = collections.defaultdict(list)
for dev, emb, init, best, wall in db.execute(
        "select n_devices, embedding, initial_us, best_us, search_wall_s from runs where status = 0"):
    cells[(str(dev), emb)].append(((init - best) / init * 100, wall))
rows = list(csv.DictReader(open(sys.argv[2])))
seen = 0
for row in rows:
    if row["family"] == "all":
        cell_means = [sum(x for x, _ in v) / len(v) for (d, e), v in cells.items() if e == row["embedding"]]
        assert abs(float(row["improvement_pct"]) - sum(cell_means) / len(cell_means)) < 1e-9, row
        continue
    v = cells[(row["devices"], row["embedding"])]
    assert row["family"] == "fam" and int(row["runs"]) == len(v) == 3, row
    assert abs(float(row["improvement_pct"]) - sum(x for x, _ in v) / len(v)) < 1e-9, row
    assert abs(float(row["wall_s"]) - sum(w for _, w in v) / len(v)) < 1e-9, row
    ec = sum(x / 100 / w for x, w in v) / len(v)
    assert abs(float(row["ec_per_s"]) - ec) <= 1e-9 * max(1, abs(ec)), row
    seen += 1
sys.exit(0 if seen == 4 else 1)
PY
# Errors name the problem: no runs with orders in the embeddings file, an unknown table.
if "$PB_BIN" report results/emb.db --tables orders 2> err.txt; then fail "orders table of a file without orders"; fi
grep -q "no run of placer 'placeto'.*traversal order" err.txt || fail "message: $(cat err.txt)"
if "$PB_BIN" report results/emb.db --tables order 2> err.txt; then fail "unknown table accepted"; fi
grep -q "unknown table 'order'" err.txt || fail "message: $(cat err.txt)"
echo ok
