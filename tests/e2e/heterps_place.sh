# HeterPS placers through `placebench place` on CTRDNN-16 (datasets/heterps): brute force finds
# the optimum the spec checked (§11: 9.435 USD), and the baselines keep the spec's checked ratios
# to it (GPU 1.61x, Heuristic 1.19x, Greedy 1.50x); bad input fails with a clear error.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

g="$PB_SRC/datasets/heterps/ctrdnn-16.json"
place() {
    "$PB_BIN" place --graph "$1" --placer "$2" --simulator heterps --cluster heterps \
        --devices 56 --json "${@:3}"
}
cost() {
    place "$g" "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["monetary_cost"])'
}
bf=$(place "$g" brute-force --out bf.json)
python3 - "$bf" <<'PY' || fail "brute force on CTRDNN-16: $bf"
import json, sys
d = json.loads(sys.argv[1])
assert abs(d["monetary_cost"] - 9.435) <= 0.0005, d
assert d["feasible"] is True and d["throughput"] >= 1.2e6, d
assert d["simulator_calls"] == 2 ** 16, d
assert d["initial_step_time_us"] is None, d
PY
python3 - bf.json <<'PY' || fail "brute force's plan is not the spec's optimum: $(cat bf.json)"
import json, sys
plan = json.load(open(sys.argv[1]))
cpu = {"emb", "pool", "concat", "fc1", "loss"}
types = {name: device for name, device in plan.items()}
cpu_dev = {types[n] for n in cpu}
gpu_dev = {d for n, d in types.items() if n not in cpu}
assert len(cpu_dev) == 1 and len(gpu_dev) == 1 and cpu_dev != gpu_dev, plan
PY
best=$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['monetary_cost'])" "$bf")
for pair in all-gpu:1.61 heuristic:1.19 greedy:1.50; do
    placer=${pair%%:*}
    want=${pair#*:}
    c=$(cost "$placer")
    python3 -c "import sys; sys.exit(0 if abs($c / $best - $want) <= 0.005 else 1)" ||
        fail "$placer costs $c, $(python3 -c "print($c / $best)") x the optimum, not $want x"
done
# The RL-LSTM scheduler finds the optimum (§6 [V]: it equalled BF in 18 of 18 runs), and the same
# seed gives the same run.
rl=$(place "$g" heterps --seed 2 2> /dev/null)
python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['monetary_cost'] == $best else 1)" "$rl" ||
    fail "heterps did not find the brute-force optimum $best: $rl"
[ "$(place "$g" heterps --seed 2 2> /dev/null | sed 's/"wall_s": [^,]*,//')" = \
  "$(echo "$rl" | sed 's/"wall_s": [^,]*,//')" ] || fail "heterps with one seed gave two runs"
# The same seed gives the same plan: genetic twice.
a=$(place "$g" genetic --seed 5)
b=$(place "$g" genetic --seed 5)
[ "$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['monetary_cost'])" "$a")" = \
  "$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['monetary_cost'])" "$b")" ] ||
    fail "genetic with one seed gave two costs: $a / $b"
# CPU-only needs 369 + 140 cores > 480: an error, not a result.
if place "$g" all-cpu 2> err.txt > out.txt; then
    fail "all-cpu on CTRDNN-16 succeeded: $(cat out.txt)"
fi
grep -q "no plan meets the throughput limit" err.txt || fail "unclear error: $(cat err.txt)"
# Reported capped instead (§3.4): the plan, below TL, marked infeasible.
capped=$(place "$g" all-cpu --opt placer.allow_infeasible=true --opt simulator.infeasible=capped)
python3 - "$capped" <<'PY' || fail "capped all-cpu on CTRDNN-16: $capped"
import json, sys
d = json.loads(sys.argv[1])
assert d["feasible"] is False and 0 < d["throughput"] < 1.2e6 and d["monetary_cost"] > 0, d
PY
# A limit no plan can meet.
if place "$g" greedy --opt simulator.throughput_limit=1e12 2> err.txt > out.txt; then
    fail "an unreachable throughput limit gave a plan: $(cat out.txt)"
fi
grep -q "no unit count reaches the limit" err.txt || fail "unclear error: $(cat err.txt)"
# A layer type the profile lacks.
sed 's/"FC in=400 out=400"/"MatMul in=400 out=400"/' "$g" > bad.json
if place bad.json greedy 2> err.txt > out.txt; then
    fail "a graph with a MatMul layer was placed: $(cat out.txt)"
fi
grep -q "'MatMul' is not a HeterPS layer kind" err.txt || fail "unclear error: $(cat err.txt)"
