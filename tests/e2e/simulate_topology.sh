# `placebench simulate --strategy` with the topology simulator on TAG's worked-example graph
# (tests/data/topology/tag_example.json, specs/tag.md §12): data parallelism with AllReduce on two
# K80s of the placeto-k80 preset (one machine, 7600 B/µs), figures computed by hand below; a plain
# placement through --simulator topology; and the one-line errors for bad strategy files.
source "$(dirname "$0")/lib/common.bash"

graph="$PB_TESTDATA/topology/tag_example.json"
cat >dp.json <<'JSON'
{"device_groups": {"both": [0, 1], "first": [0]},
 "default": {"group": "both", "option": "allreduce"},
 "ops": {"GradientDescent": {"group": "first"}}}
JSON

# TAG's Example 2 schedule with the NCCL model at 7600 B/µs (coefficients x 2810/7600):
# max(trunc(0.0160543 * 128 + 136.1376), trunc(0.1026657 * 128 + 78.3560)) = max(138, 91) = 138.
# Each K80: x 0-6, W 6-8, lr 8-9, y 9-61, gW 61-103; AllReduce 103-241; upd 241-261; the NoOp on
# GPU 0 261-264.  Busy [126, 123]; peaks W + lr + the reduced gradient = 524292.
"$PB_BIN" simulate --graph "$graph" --strategy dp.json --cluster placeto-k80 --json >dp.out ||
    fail "simulate --strategy failed"
python3 - dp.out <<'PY' || fail "simulate --strategy --json: $(cat dp.out)"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["step_time_us"] == 264, out
assert out["peak_memory_bytes"] == [524292, 524292], out
assert out["busy_us"] == [126, 123], out
assert out["feasible"] is True and out["link_busy_us"] == [0, 0, 0, 0], out
PY
echo "ok: DP with AllReduce on two K80s: 264 us, peaks 524292"

# Proportional shares 3:1 are normalised to 0.75 / 0.25 (no replica costs for them: cost x share):
# GPU 1 computes x 2.5, y 25, gW 20; GPU 0 x 7.5, y 75, gW 60.
cat >shares.json <<'JSON'
{"device_groups": {"both": [0, 1], "first": [0]},
 "default": {"group": "both", "option": "allreduce"},
 "ops": {"GradientDescent": {"group": "first"}},
 "shares": {"both": [3, 1]}}
JSON
"$PB_BIN" simulate --graph "$graph" --strategy shares.json --cluster placeto-k80 --json >shares.out ||
    fail "simulate with shares failed"
python3 - shares.out <<'PY' || fail "simulate with shares: $(cat shares.out)"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["busy_us"] == [7.5 + 2 + 1 + 75 + 60 + 20 + 3, 2.5 + 2 + 1 + 25 + 20 + 20], out
PY
echo "ok: batch shares"

# Example 1's placement (x and the NoOp on GPU 0) on the K80s through the placement reader:
# x 0-10, x -> GPU 1 twice (65536 / 7600 -> 8 + 0 us: 10-18, 18-26), y 18-118, gW 118-198,
# upd 198-218, the NoOp 218-221.
echo '{"x": 0, "W": 1, "y": 1, "gW": 1, "lr": 1, "upd": 1, "GradientDescent": 0}' >mp.json
"$PB_BIN" simulate --graph "$graph" --placement mp.json --simulator topology --json >mp.out ||
    fail "simulate --placement --simulator topology failed"
python3 - mp.out <<'PY' || fail "simulate --simulator topology: $(cat mp.out)"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["step_time_us"] == 221, out
assert out["link_busy_us"] == [0, 16, 0, 0], out
PY
"$PB_BIN" simulate --graph "$graph" --strategy dp.json --cluster placeto-k80 >dp.txt
grep -q "^step time   264 us" dp.txt || fail "text output: $(cat dp.txt)"
echo "ok: a plain placement and the text output"

# --compiled: Example 3's graph (PS on GPU 0): 13 replicas, one AddN on GPU 0 adding the two
# half gradients (131072 bytes each), read whole (262144) by both optimizer replicas, and the
# shape node each replica of the Placeholder x waits for (TAG's replace_placeholder).
sed 's/"allreduce"/"ps"/' dp.json >ps.json
"$PB_BIN" simulate --graph "$graph" --strategy ps.json --cluster placeto-k80 --compiled c.json \
    >/dev/null || fail "simulate --compiled failed"
python3 - c.json <<'PY' || fail "--compiled: $(cat c.json)"
import json, sys
g = json.load(open(sys.argv[1]))
kinds = [n["kind"] for n in g["nodes"]]
assert kinds.count("op") == 13 and kinds.count("addn") == 1 and kinds.count("shape") == 2, kinds
assert len(kinds) == 16, kinds
addn = next(n for n in g["nodes"] if n["kind"] == "addn")
assert addn["id"] == "gW/aux_addn_0" and addn["device"] == 0, addn
into = sorted((l["source"], l["bytes"]) for l in g["links"] if l["target"] == addn["id"])
assert into == [("gW/replica_0", 131072), ("gW/replica_1", 131072)], into
out = sorted((l["target"], l["bytes"]) for l in g["links"] if l["source"] == addn["id"])
assert out == [("upd/replica_0", 262144), ("upd/replica_1", 262144)], out
PY
echo "ok: --compiled writes the distributed graph"

# --trace of Example 3's strategy on the K80s (7600 B/µs, no latency): gW 61-103 on each GPU;
# push gW1 -> GPU 0 131072 / 7600 -> 17 (103-120); the AddN at 120; upd0 120-140; pull the sum
# -> GPU 1 262144 / 7600 -> 34 (120-154); upd1 154-174; the NoOp 174-177.
"$PB_BIN" simulate --graph "$graph" --strategy ps.json --cluster placeto-k80 --trace t.json \
    --json >ps.out || fail "simulate --trace failed"
python3 - t.json ps.out <<'PY' || fail "--trace: $(cat t.json)"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
assert json.load(open(sys.argv[2]))["step_time_us"] == 177
x = [(e["name"], e["pid"], e["tid"], e["ts"], e["dur"]) for e in events if e["ph"] == "X"]
transfers = [e for e in x if e[2] >= 2]
assert transfers == [("gW/transfer", 1, 2, 103, 17), ("gW/transfer", 0, 3, 120, 34)], transfers
compute = sorted(e for e in x if e[2] == 0)
assert len(compute) == 16, compute  # 13 replicas, the AddN, x's two shape nodes
assert ("upd/replica_1", 1, 0, 154, 20) in compute and ("gW/addn", 0, 0, 120, 0) in compute
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
assert names[(1, 2)] == "to 0" and names[(0, 3)] == "to 1" and names[(0, 0)] == "compute", names
PY
echo "ok: --trace draws computations and transfers per device"

# expect_error NEEDLE ARGS... — simulate must fail (not by a signal) with NEEDLE on stderr.
expect_error() {
    local needle=$1
    shift
    local status=0
    "$PB_BIN" simulate "$@" >out.txt 2>err.txt || status=$?
    [ "$status" -ne 0 ] || fail "simulate $*: exit status 0"
    [ "$status" -lt 128 ] || fail "simulate $*: killed by a signal ($status)"
    [ ! -s out.txt ] || fail "simulate $*: printed on stdout: $(cat out.txt)"
    grep -qF -- "$needle" err.txt || fail "simulate $*: error lacks \"$needle\": $(cat err.txt)"
    echo "ok: $(cat err.txt)"
}
sed 's/"first"}}}/"frist"}}}/' dp.json >typo.json
expect_error "typo.json: op 'GradientDescent': unknown device group 'frist' (did you mean 'first'?)" \
    --graph "$graph" --strategy typo.json
sed 's/{"group": "first"}/{"group": "both", "option": "none"}/' dp.json >none.json
expect_error "op 'GradientDescent': option 'none' puts an op on one device, but device group 'both' has 2" \
    --graph "$graph" --strategy none.json
sed 's/"allreduce"/"all-reduce"/' dp.json >word.json
expect_error "default: unknown option 'all-reduce'" --graph "$graph" --strategy word.json
echo '{"device_groups": {"a": [0]}, "ops": {"x": {"group": "a"}}}' >partial.json
expect_error "op 'W' has no device group" --graph "$graph" --strategy partial.json
# A graph without the split annotations cannot be batch-split.
python3 - "$graph" >bare.json <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    n.pop("split", None)
print(json.dumps(g))
PY
expect_error "node 'x': device group 0 with option 'allreduce' splits the batch, but the node has no 'split' annotation" \
    --graph bare.json --strategy dp.json
expect_error "usage" --graph "$graph" --strategy dp.json --placement mp.json
expect_error "unknown option 'prunne' of simulator 'topology' (did you mean 'prune'?)" \
    --graph "$graph" --strategy dp.json --opt simulator.prunne=false
expect_error "--opt wants simulator.KEY=VALUE, not 'prune=false'" \
    --graph "$graph" --strategy dp.json --opt prune=false
echo "ok: bad strategies refused"
