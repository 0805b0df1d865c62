# TAG's SFB on DP-NCCL (dp-nccl sfb=true, plugins/shared/sfb): the ops it duplicates, written as a
# strategy file with per-op "duplicate" options, give exactly the step time `simulate --strategy`
# gives; a duplicated gradient is computed whole on every replica and not all-reduced (specs/tag.md
# §3.2, §3.3, §9); SFB shortens BERT-Small's step by dropping its embedding gradient's AllReduce;
# `bench sfb` prints the ILP times and Tables 5 and 6; bad arguments are refused with one clear line.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" dataset gen vgg19 --batch 4 --out zoo 2>/dev/null || fail "dataset gen vgg19"
g=zoo/vgg19.json
place_on() { # GRAPH OPTION...
    local graph=$1
    shift
    "$PB_BIN" place --graph "$graph" --simulator topology --cluster tag-sfb --devices 2 --json \
        --placer dp-nccl "$@"
}
place() { place_on "$g" "$@"; }
field() {
    python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"
}

plain=$(place 2>/dev/null) || fail "dp-nccl without SFB failed"
[ "$(field "$plain" duplicated_ops)" = None ] || fail "dp-nccl without SFB duplicated ops: $plain"
sfb=$(place --opt placer.sfb=true 2>sfb.err) || fail "dp-nccl with SFB failed: $(cat sfb.err)"
grep -q "sfb: [0-9]* ops duplicated" sfb.err || fail "no SFB summary on stderr: $(cat sfb.err)"

# The same strategy by hand: everything all-reduced on both GPUs, SFB's ops duplicated.
python3 - "$sfb" >sfb_strategy.json <<'PY'
import json, sys
dup = json.loads(sys.argv[1])["duplicated_ops"]
assert len(dup) > 0, dup
print(json.dumps({"device_groups": {"all": [0, 1]},
                  "default": {"group": "all", "option": "allreduce"},
                  "ops": {name: {"group": "all", "option": "duplicate"} for name in dup}}))
PY
want=$("$PB_BIN" simulate --graph "$g" --simulator topology --cluster tag-sfb --devices 2 --json \
    --strategy sfb_strategy.json |
    python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["step_time_us"]))') ||
    fail "simulate of SFB's strategy failed"
python3 -c "import sys; sys.exit(0 if $(field "$sfb" best_step_time_us) == $want else 1)" ||
    fail "dp-nccl sfb=true gave $(field "$sfb" best_step_time_us) us, simulate $want us"
# What a duplicate is (specs/tag.md §3.2, §9): fc6's weight gradient (Conv2DBackpropFilter, SUM
# class, no per-replica cost table in the zoo graphs) is one of SFB's ops.  Under DP each replica
# computes half the batch (cost x 1/2, README "Strategy files"); duplicated, each computes the whole
# batch: exactly twice as long.  Its gradient is then whole on both GPUs, so the AllReduce DP has
# for it (§3.3, at S/2 bytes: spec §0 fact 5) is gone.  (SFB no longer shortens VGG19's step: that
# held while the compiler summed fc6's 411 MB partial gradients on one GPU and sent the sum whole to
# the other, before PB_COMPILE_SUM_PARTS; REPRODUCE.md "TAG — SFB" has the figures.)
cat >dp.json <<'JSON'
{"device_groups": {"all": [0, 1]}, "default": {"group": "all", "option": "allreduce"}}
JSON
sim_trace() { # GRAPH STRATEGY TRACE
    "$PB_BIN" simulate --graph "$1" --simulator topology --cluster tag-sfb --devices 2 --json \
        --strategy "$2" --trace "$3" >/dev/null
}
sim_trace "$g" dp.json dp_trace.json || fail "simulate DP on VGG19"
sim_trace "$g" sfb_strategy.json sfb_trace.json || fail "simulate SFB on VGG19"
python3 - "$sfb" <<'PY' || fail "fc6's duplicated weight gradient"
import json, sys
filt = "gradients/vgg_19/fc6/Conv2D_grad/Conv2DBackpropFilter"
assert filt in json.loads(sys.argv[1])["duplicated_ops"], "SFB did not pick fc6's gradient"
def events(path):
    return json.load(open(path))["traceEvents"]
def dur(ev, name):
    return [e["dur"] for e in ev if e.get("name") == name]
dp, sfb = events("dp_trace.json"), events("sfb_trace.json")
for r in range(2):
    half, whole = dur(dp, f"{filt}/replica_{r}"), dur(sfb, f"{filt}/replica_{r}")
    assert len(half) == 1 and len(whole) == 1, (half, whole)
    assert abs(whole[0] - 2 * half[0]) <= 1e-9 * whole[0], (half, whole)
fc6 = [e for e in dp if e.get("cat") == "allreduce" and "fc6/Conv2D_grad" in e["name"]]
assert fc6 and all(e["args"]["bytes"] == 411041792 / 2 for e in fc6), fc6
assert not [e for e in sfb if e.get("cat") == "allreduce" and "fc6/Conv2D_grad" in e["name"]]
PY

# Where SFB pays (the paper's case): BERT-Small's embedding gradient (UnsortedSegmentSum) is a
# dense vocabulary x hidden matrix computed from 4 x 128 token ids.  DP all-reduces it at S/2
# bytes (S its output size); SFB duplicates it, that AllReduce disappears, and the step is shorter.
"$PB_BIN" dataset gen bert-small --batch 4 --out zoo 2>/dev/null || fail "dataset gen bert-small"
gb=zoo/bert-small.json
bplain=$(place_on "$gb" 2>/dev/null) || fail "dp-nccl on BERT-Small"
bsfb=$(place_on "$gb" --opt placer.sfb=true 2>/dev/null) || fail "dp-nccl sfb=true on BERT-Small"
python3 - "$bsfb" >bsfb_strategy.json <<'PY'
import json, sys
dup = json.loads(sys.argv[1])["duplicated_ops"]
assert "gradients/bert/embeddings/embedding_lookup_grad/UnsortedSegmentSum" in dup, dup
print(json.dumps({"device_groups": {"all": [0, 1]},
                  "default": {"group": "all", "option": "allreduce"},
                  "ops": {name: {"group": "all", "option": "duplicate"} for name in dup}}))
PY
sim_trace "$gb" dp.json bdp_trace.json || fail "simulate DP on BERT-Small"
sim_trace "$gb" bsfb_strategy.json bsfb_trace.json || fail "simulate SFB on BERT-Small"
python3 - "$gb" <<'PY' || fail "BERT-Small's embedding gradient is still all-reduced"
import json, sys
op = "gradients/bert/embeddings/embedding_lookup_grad/UnsortedSegmentSum"
S = next(n["out_size"] for n in json.load(open(sys.argv[1]))["nodes"] if n["id"] == op)
def allreduce(path):
    return [e for e in json.load(open(path))["traceEvents"]
            if e.get("cat") == "allreduce" and e["name"] == op + "/allreduce"]
dp = allreduce("bdp_trace.json")
assert len(dp) == 2 and all(e["args"]["bytes"] == S / 2 for e in dp), (S, dp)
assert not allreduce("bsfb_trace.json")
PY
python3 -c "import sys; sys.exit(0 if $(field "$bsfb" best_step_time_us) < \
$(field "$bplain" best_step_time_us) else 1)" ||
    fail "SFB did not shorten BERT-Small's step: $bsfb vs $bplain"

# The benchmark: one row, the overall solve times, Table 5's VGG19 row with the paper's 0.1195 s.
"$PB_BIN" bench sfb vgg19 --depth 4 >bench.out 2>bench.err || fail "bench sfb: $(cat bench.err)"
grep -q "^| vgg19 | [0-9]* | [1-9][0-9]* |" bench.out || fail "no vgg19 row: $(cat bench.out)"
grep -q "sfb_depth=4" bench.out || fail "the option is not echoed: $(cat bench.out)"
grep -q "^SFB ILP solve time over all [1-9][0-9]* ILPs of 1 models: median" bench.out ||
    fail "no summary line: $(cat bench.out)"
grep -q "^| VGG19 | .* | 0.1195 | 0.1192 | 0.3% |" bench.out || fail "no Table 5 row: $(cat bench.out)"
grep -q "^| 1 | .* | Reshape | 341 |" bench.out || fail "no Table 6: $(cat bench.out)"

# The reference code's whole-graph ILP: one ILP for the model.
"$PB_BIN" bench sfb vgg19 --mode reference >ref.out 2>ref.err || fail "bench sfb --mode reference: $(cat ref.err)"
grep -q "^| vgg19 | [0-9]* | 1 |" ref.out || fail "reference mode is not one ILP: $(cat ref.out)"
grep -q "sfb_mode=reference" ref.out || fail "the mode is not echoed: $(cat ref.out)"

# Bad input.
if "$PB_BIN" bench sfb vgg19 --mode paper >/dev/null 2>err.txt; then fail "--mode paper accepted"; fi
grep -q "bench sfb: --mode wants gradient or reference, not 'paper'" err.txt || fail "$(cat err.txt)"
if "$PB_BIN" bench sfb nosuch >/dev/null 2>err.txt; then fail "an unknown model was accepted"; fi
grep -q "bench sfb: unknown model 'nosuch' (the zoo has: " err.txt || fail "$(cat err.txt)"
# A repeated option replaces the earlier value (nine --depth once overran the option table).
"$PB_BIN" bench sfb vgg19 $(for d in 1 2 3 4 5 6 7 8 9; do printf -- '--depth %s ' $d; done) \
    >rep.out 2>rep.err || fail "bench sfb with a repeated --depth: $(cat rep.err)"
grep -q "seed 1, sfb_depth=9\$" rep.out || fail "the last --depth does not stand alone: $(head -1 rep.out)"
if "$PB_BIN" bench sfb vgg19 --depth -1 >/dev/null 2>err.txt; then fail "--depth -1 accepted"; fi
grep -q "bench sfb: --depth wants a non-negative integer, not '-1'" err.txt || fail "$(cat err.txt)"
if place --opt placer.sfb_time_limit=-2 >/dev/null 2>err.txt; then fail "a negative limit"; fi
grep -q "sfb_time_limit" err.txt || fail "$(cat err.txt)"
# A graph without the role/split annotations replication needs: the op is named, SFB says so.
if "$PB_BIN" place --graph graphs/diamond.json --simulator topology --cluster tag-sfb --devices 2 \
    --placer dp-nccl --opt placer.sfb=true >/dev/null 2>err.txt; then
    fail "SFB on an unannotated graph was accepted"
fi
grep -q "dp-nccl: SFB: node 'in': device group 0 with option 'allreduce' splits the batch" err.txt ||
    fail "$(cat err.txt)"
echo ok
