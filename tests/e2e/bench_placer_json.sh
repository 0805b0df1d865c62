# `bench placer --json` prints one JSON object per graph and device count; paper_s is the
# embedding paper's Table 2 time where it has one, else null (it once printed "null0.000").
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" bench placer "$PB_TESTDATA/graphs/diamond.json" --devices 2,3 --episodes 2 --json \
    > bench.jsonl 2> bench.err || fail "bench placer failed: $(cat bench.err)"
[ "$(wc -l < bench.jsonl)" = 2 ] || fail "want 2 lines: $(cat bench.jsonl)"
python3 - bench.jsonl <<'PY' || fail "bad JSON: $(cat bench.jsonl)"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["devices"] for r in rows] == [2, 3], rows
for r in rows:
    assert r["paper_s"] is None, r  # diamond is no graph of the paper's families
    assert r["episodes"] == 2 and r["steps"] > 0 and r["best_step_time_us"] <= r["initial_step_time_us"], r
    # phases: episode 0 is greedy (forward only), episode 1 trains (forward and update)
    assert r["isa"] in ("avx512", "avx2", "portable") and r["peak_gflops"] > 0, r
    assert r["forward_gflop"] > 0 and r["update_gflop"] > 0 and r["sim_events"] > 0, r
    assert r["forward_cpu_s"] >= 0 and r["update_cpu_s"] >= 0 and r["sim_cpu_s"] >= 0, r
PY
echo ok
