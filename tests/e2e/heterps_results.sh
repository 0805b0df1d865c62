# A small HeterPS sweep stores each run's monetary cost, throughput and feasibility (schema 2),
# exactly as `placebench place --json` gives them for the same graph, placer, options and run
# seed; a failed run (all-CPU MATCHNET misses the core limit) stores none; export carries them.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

cat >sweep.lua <<LUA
return experiment {
  name      = "heterps-store",
  datasets  = { "$PB_SRC/datasets/heterps/ctrdnn-8.json", "$PB_SRC/datasets/heterps/nce.json",
                "$PB_SRC/datasets/heterps/matchnet.json" },
  devices   = 2,
  cluster   = "heterps-types",
  simulator = "heterps",
  placer    = { { "heterps", rounds = 40 }, { "bo", budget = 20 }, "greedy", "all-cpu" },
  repeats   = 2,
  seed      = 5,
  results   = "sweep.db",
}
LUA
"$PB_BIN" run sweep.lua -j 2 >run.out 2>&1 || {
    cat run.out >&2
    fail "the sweep failed"
}
[ "$(sql sweep.db "SELECT value FROM meta WHERE key = 'schema_version'")" = 3 ] ||
    fail "schema_version is not 3"
[ "$(sql sweep.db "SELECT count(*) FROM runs")" = 24 ] || fail "not 24 runs stored"
[ "$(sql sweep.db "SELECT count(*) FROM runs WHERE status = 0 AND (monetary_cost IS NULL OR
      throughput IS NULL OR feasible IS NOT 1)")" = 0 ] || fail "an ok run lacks its verdict"
failed=$(sql sweep.db "SELECT count(*) FROM runs WHERE status != 0")
[ "$failed" -ge 2 ] || fail "all-CPU MATCHNET did not fail ($failed failed runs)"
[ "$(sql sweep.db "SELECT count(*) FROM runs WHERE status != 0 AND (monetary_cost IS NOT NULL
      OR throughput IS NOT NULL OR feasible IS NOT NULL)")" = 0 ] ||
    fail "a failed run stored a verdict"

# Every ok run again through `place --json` with its stored seed: bit-identical cost and
# throughput (the export writes doubles in full precision, as place --json does).
"$PB_BIN" export sweep.db --format jsonl >runs.jsonl
python3 - runs.jsonl "$PB_BIN" "$PB_SRC" <<'PY' || fail "stored verdicts differ from place --json"
import json, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
opts = {"heterps": ["--opt", "placer.rounds=40"], "bo": ["--opt", "placer.budget=20"]}
checked = 0
for r in rows:
    if r["status"] != 0:
        continue
    graph = "%s/datasets/heterps/%s" % (sys.argv[3], r["graph"])
    out = subprocess.run([sys.argv[2], "place", "--graph", graph, "--placer", r["placer"],
                          "--simulator", "heterps", "--cluster", "heterps-types", "--devices",
                          "2", "--seed", str(r["seed"]), "--json"] + opts.get(r["placer"], []),
                         check=True, capture_output=True, text=True).stdout
    p = json.loads(out)
    got = (r["monetary_cost"], r["throughput"], bool(r["feasible"]), r["best_us"])
    want = (p["monetary_cost"], p["throughput"], p["feasible"], p["best_step_time_us"])
    assert got == want, (r["run_id"], r["placer"], r["graph"], r["seed"], got, want)
    checked += 1
assert checked >= 20, checked
PY
# The CSV export has the three columns too.
"$PB_BIN" export sweep.db --format csv >runs.csv
head -1 runs.csv | grep -q ',feasible,throughput,monetary_cost,graph_origin$' ||
    fail "CSV header lacks the verdict columns: $(head -1 runs.csv)"
