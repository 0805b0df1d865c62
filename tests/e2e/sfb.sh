# TAG's SFB on DP-NCCL (dp-nccl sfb=true, plugins/shared/sfb): the ops it duplicates, written as a
# strategy file with per-op "duplicate" options, give exactly the step time `simulate --strategy`
# gives; SFB shortens VGG19's step at batch 4 on two 1080Ti; `bench sfb` prints the ILP times and
# Tables 5 and 6; bad arguments are refused with one clear line.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" dataset gen vgg19 --batch 4 --out zoo 2>/dev/null || fail "dataset gen vgg19"
g=zoo/vgg19.json
place() {
    "$PB_BIN" place --graph "$g" --simulator topology --cluster tag-sfb --devices 2 --json \
        --placer dp-nccl "$@"
}
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
python3 -c "import sys; sys.exit(0 if $(field "$sfb" best_step_time_us) < \
$(field "$plain" best_step_time_us) else 1)" ||
    fail "SFB did not shorten VGG19's step: $sfb vs $plain"

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
