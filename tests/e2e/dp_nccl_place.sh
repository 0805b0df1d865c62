# TAG's DP-NCCL and DP-NCCL-P baselines through `placebench place` on a zoo graph (VGG19) with the
# topology simulator: the replicated strategy the placer returns for the grouped graph flows
# through the runner's expansion to ops and gives exactly the step time `simulate --strategy`
# gives for the same strategy written by hand; single-device and random still return placements;
# a simulator of plain placements and --out are refused with one clear line.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" dataset gen vgg19 --out zoo 2>/dev/null || fail "dataset gen vgg19"
g=zoo/vgg19.json
place() {
    "$PB_BIN" place --graph "$g" --simulator topology --json --placer "$@"
}
simulate() {
    "$PB_BIN" simulate --graph "$g" --json --strategy "$@" |
        python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["step_time_us"]))'
}
field() {
    python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

all16='"all": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]'
echo "{\"device_groups\": {$all16}, \"default\": {\"group\": \"all\", \"option\": \"allreduce\"}}" \
    >dp.json
# dp-nccl-p's shares: proportional to each device's speed, peak FLOP/s / the K80's (as
# configs/clusters.lua computes it) for 4 V100-32G, 8 1080Ti (3584 cores x 2 x 1582 MHz) and
# 4 P100.  Split sizes are floored
# bytes, so the shares must be the same doubles for the step times to agree exactly.
python3 - "$all16" >dpp.json <<'PY'
import json, sys
T = 1e12
k80 = 2.8 * T
speed = [15.7 * T / k80] * 4 + [3584 * 2 * 1582e6 / k80] * 8 + [9.3 * T / k80] * 4
groups = json.loads("{" + sys.argv[1] + "}")
print(json.dumps({"device_groups": groups, "default": {"group": "all", "option": "allreduce"},
                  "shares": {"all": speed}}))
PY

dp=$(place dp-nccl --cluster tag-testbed --devices 16) || fail "dp-nccl on the testbed failed"
[ "$(field "$dp" strategy)" = replicated ] || fail "dp-nccl did not return a replicated strategy: $dp"
[ "$(field "$dp" feasible)" = True ] || fail "dp-nccl VGG19 infeasible on the testbed: $dp"
want=$(simulate dp.json --cluster tag-testbed --devices 16) || fail "simulate dp.json failed"
python3 -c "import sys; sys.exit(0 if $(field "$dp" best_step_time_us) == $want else 1)" ||
    fail "dp-nccl through place gave $(field "$dp" best_step_time_us) us, simulate $want us"

dpp=$(place dp-nccl-p --cluster tag-testbed --devices 16) || fail "dp-nccl-p on the testbed failed"
want_p=$(simulate dpp.json --cluster tag-testbed --devices 16) || fail "simulate dpp.json failed"
python3 -c "import sys; a, b = $(field "$dpp" best_step_time_us), $want_p; \
sys.exit(0 if abs(a - b) <= 1e-9 * b else 1)" ||
    fail "dp-nccl-p through place gave $(field "$dpp" best_step_time_us) us, simulate $want_p us"
[ "$(field "$dpp" best_step_time_us)" != "$(field "$dp" best_step_time_us)" ] ||
    fail "dp-nccl-p equals dp-nccl on the heterogeneous testbed"
# On identical GPUs (the first 8 of tag-cloud are V100-16G) speed shares are even shares.
a=$(place dp-nccl --cluster tag-cloud --devices 8) || fail "dp-nccl on tag-cloud failed"
b=$(place dp-nccl-p --cluster tag-cloud --devices 8) || fail "dp-nccl-p on tag-cloud failed"
python3 -c "import sys; a, b = $(field "$a" best_step_time_us), $(field "$b" best_step_time_us); \
sys.exit(0 if abs(a - b) <= 1e-9 * a else 1)" || fail "on 8 V100s dp-nccl $a, dp-nccl-p $b"
echo "ok: dp-nccl and dp-nccl-p through place match simulate --strategy"

# The plain-placement placers on the topology simulator.
one=$(place single-device --cluster tag-testbed --devices 16) || fail "single-device failed"
[ "$(field "$one" strategy)" = placement ] || fail "single-device: $one"
echo '{"device_groups": {"g": [0]}, "default": {"group": "g", "option": "none"}}' >one.json
want=$(simulate one.json --cluster tag-testbed --devices 16) || fail "simulate one.json failed"
python3 -c "import sys; sys.exit(0 if $(field "$one" best_step_time_us) == $want else 1)" ||
    fail "single-device through place gave $(field "$one" best_step_time_us) us, simulate $want us"
r=$(place random --cluster gdp-p100 --devices 4 --sim-calls 5) || fail "random on gdp-p100 failed"
[ "$(field "$r" simulator_calls)" = 5 ] || fail "random: $r"
r=$(place dp-nccl --cluster tag-random --devices 6) || fail "dp-nccl on tag-random failed"
echo "ok: single-device, random and dp-nccl on the other presets"

# The placeto simulator evaluates plain placements only (ABI 1.4 declarations): the pair is
# refused before anything runs, naming both plugins and the strategy kinds.
if "$PB_BIN" place --graph "$g" --placer dp-nccl --devices 2 >out.txt 2>err.txt; then
    fail "dp-nccl on the placeto simulator succeeded: $(cat out.txt)"
fi
[ "$(wc -l <err.txt)" = 1 ] || fail "more than one error line: $(cat err.txt)"
grep -q "placer 'dp-nccl' returns replicated strategies and simulator 'placeto' evaluates plain placements" \
    err.txt || fail "unclear refusal: $(cat err.txt)"
if place dp-nccl --cluster tag-testbed --devices 4 --out p.json >out.txt 2>err.txt; then
    fail "--out with a replicated strategy succeeded"
fi
grep -q "place: --out writes plain placements; dp-nccl returned a replicated strategy" err.txt ||
    fail "unclear --out refusal: $(cat err.txt)"
[ ! -e p.json ] || fail "--out wrote p.json for a replicated strategy"
echo "ok: refusals"

# bench simulator --strategy dp-nccl evaluates the same strategy: its row's step time is dp-nccl's.
"$PB_BIN" bench simulator "$g" --simulator topology --cluster tag-testbed --devices 16 \
    --strategy dp-nccl --evals 3 >bench.txt || fail "bench --strategy dp-nccl failed"
python3 - bench.txt "$(field "$dp" best_step_time_us)" <<'PY' || fail "bench: $(cat bench.txt)"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith(("#", "    ops"))]
assert len(rows) == 1, rows
ops, devices, median, least, events, per_s, step = rows[0][:7]
assert ops == "1119" and devices == "16", rows
assert 0 < float(least) <= float(median) and int(events) > 0 and float(per_s) > 0, rows
assert abs(float(step) - float(sys.argv[2])) <= 0.05, (step, sys.argv[2])
PY
if "$PB_BIN" bench simulator "$g" --strategy dp-nccl --devices 2 >out.txt 2>err.txt; then
    fail "bench dp-nccl on the placeto simulator succeeded"
fi
grep -q "not a plain placement" err.txt || fail "unclear bench refusal: $(cat err.txt)"
echo "ok: bench simulator --strategy dp-nccl"
