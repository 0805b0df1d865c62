#!/usr/bin/env bash
# tag_search.sh — TAG's MCTS placers through the CLI: pure-mcts on VGG19 and the TAG testbed
# starts from DP-NCCL's exact step time and never returns worse, is deterministic for a seed and
# obeys a simulator-call budget, stops at the first strategy better than DP-NCCL when asked;
# tag refuses without its GNN; bad input (an empty device group,
# no devices, a model that fits nowhere) gives one clear line and, in a sweep, a stored failed
# run; an ok run's log keeps the strategy description the report reads.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

"$PB_BIN" dataset gen vgg19 --out zoo 2>/dev/null || fail "dataset gen vgg19"
g=zoo/vgg19.json
place() {
    "$PB_BIN" place --graph "$1" --simulator topology --cluster tag-testbed --devices 16 --json \
        --placer "${@:2}"
}
field() {
    python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

dp=$(place $g dp-nccl) || fail "dp-nccl failed"
a=$(place $g pure-mcts --opt placer.playouts=40 --opt placer.device_groups=type --seed 3) ||
    fail "pure-mcts failed"
b=$(place $g pure-mcts --opt placer.playouts=40 --opt placer.device_groups=type --seed 3) ||
    fail "pure-mcts failed the second time"
python3 -c 'import json, sys
a, b = (json.loads(x) for x in sys.argv[1:])
del a["wall_s"], b["wall_s"]
sys.exit(0 if a == b else 1)' "$a" "$b" || fail "same seed, different results: $a / $b"
[ "$(field "$a" initial_step_time_us)" = "$(field "$dp" best_step_time_us)" ] ||
    fail "pure-mcts's initial step time is not DP-NCCL's: $a / $dp"
python3 -c "import sys; sys.exit(0 if $(field "$a" best_step_time_us) <= \
$(field "$a" initial_step_time_us) else 1)" || fail "pure-mcts returned worse than DP-NCCL: $a"
[ "$(field "$a" strategy)" = replicated ] || fail "pure-mcts: not a replicated strategy: $a"
[ "$(field "$a" feasible)" = True ] || fail "pure-mcts: infeasible result: $a"
c=$(place $g pure-mcts --sim-calls 7 --opt placer.device_groups=type) || fail "--sim-calls 7"
[ "$(field "$c" simulator_calls)" = 7 ] || fail "--sim-calls 7 made $(field "$c" simulator_calls)"
echo "ok: pure-mcts on VGG19"

# stop_when_better (TAG's Table 7 runs): the search stops at the first playout that beats
# DP-NCCL.  On a random 8-GPU topology (seed 1) it does within 40 playouts; one simulator call
# fewer, without the option, has not beaten it yet; the full 40 playouts make 40 calls.
rnd() {
    "$PB_BIN" place --graph $g --simulator topology --cluster tag-random --devices 8 --json \
        --seed 1 --placer pure-mcts --opt placer.device_groups=type "$@"
}
s=$(rnd --opt placer.playouts=40 --opt placer.stop_when_better=true) || fail "stop_when_better"
n=$(field "$s" simulator_calls)
[ "$n" -lt 40 ] || fail "stop_when_better did not stop: $s"
python3 -c "import sys; sys.exit(0 if $(field "$s" best_step_time_us) < \
$(field "$s" initial_step_time_us) else 1)" || fail "stopped without beating DP-NCCL: $s"
e=$(rnd --opt placer.playouts=40 --sim-calls $((n - 1))) || fail "--sim-calls $((n - 1))"
[ "$(field "$e" best_step_time_us)" = "$(field "$e" initial_step_time_us)" ] ||
    fail "DP-NCCL was beaten before the playout stop_when_better stopped at: $e / $s"
f=$(rnd --opt placer.playouts=40) || fail "40 playouts"
[ "$(field "$f" simulator_calls)" -gt "$n" ] || fail "without the option: $f"
echo "ok: stop_when_better"

# tag without its GNN: one line naming what to do, exit 1.
expect_error() {
    local expect=$1
    shift
    status=0
    "$@" >out.txt 2>err.txt || status=$?
    [ "$status" -eq 1 ] || fail "$*: exit status $status: $(cat err.txt)"
    [ ! -s out.txt ] || fail "$*: wrote to stdout: $(cat out.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$*: stderr is not one line: $(cat err.txt)"
    grep -qF -- "$expect" err.txt || fail "$*: error lacks '$expect': $(cat err.txt)"
}
expect_error "tag needs the trained GNN's parameters: --opt placer.params=FILE" place $g tag
expect_error "tag: the GNN's parameters (placer.params) do not load: gnn.bin" \
    place $g tag --opt placer.params=gnn.bin

# Device groups without devices: a strategy's, and a cluster of none.
echo '{"device_groups": {"all": [0, 1], "none": []}, "default": {"group": "none",
       "option": "allreduce"}}' >empty.json
expect_error "device group 'none' must be a non-empty list of devices" \
    "$PB_BIN" simulate --graph $g --strategy empty.json --cluster tag-testbed --devices 16
expect_error "--devices wants an integer in 1..4096, not '0'" \
    "$PB_BIN" place --graph $g --placer pure-mcts --simulator topology --cluster tag-testbed \
    --devices 0

# A training step whose variable holds 2 TB: no strategy fits (DP-NCCL, model parallelism or any
# other), so the placer fails with the peak it saw; the same graph with 1 MB fits.
big_graph() {
    cat <<JSON
{"directed": true, "multigraph": false, "graph": {"name": "$1"}, "nodes": [
 {"id": "x", "type": "Placeholder", "cost": 10, "out_sizes": [65536], "mem": 0, "split": "batch"},
 {"id": "W", "type": "VariableV2", "cost": 2, "out_sizes": [262144], "mem": $2,
  "role": "parameter", "split": "none"},
 {"id": "y", "type": "MatMul", "cost": 100, "out_sizes": [65536], "mem": 0, "split": "batch"},
 {"id": "gW", "type": "MatMul", "cost": 80, "out_sizes": [262144], "mem": 0, "role": "gradient",
  "split": "sum"},
 {"id": "upd", "type": "ApplyGradientDescent", "cost": 20, "out_sizes": [0], "mem": 0,
  "role": "apply", "split": "none"}],
 "links": [{"source": "x", "target": "y", "port": 0}, {"source": "W", "target": "y", "port": 0},
  {"source": "x", "target": "gW", "port": 0}, {"source": "y", "target": "gW", "port": 0},
  {"source": "W", "target": "upd", "port": 0}, {"source": "gW", "target": "upd", "port": 0}]}
JSON
}
big_graph huge 2e12 >huge.json
big_graph small 1e6 >small.json
expect_error "no strategy fits in memory" place huge.json pure-mcts --opt placer.playouts=20
grep -qF "GiB on device" err.txt || fail "the OOM error names no device: $(cat err.txt)"
place small.json pure-mcts --opt placer.playouts=20 >/dev/null || fail "the 1 MB model failed"

cat >sweep.lua <<'LUA'
return experiment {
  name      = "tag-bad-input",
  datasets  = { "huge.json", "small.json" },
  devices   = 16,
  cluster   = "tag-testbed",
  simulator = "topology",
  placer    = { "pure-mcts", playouts = 20 },
  seed      = 1,
  results   = "sweep.db",
}
LUA
"$PB_BIN" run sweep.lua >run.out 2>&1 || true
[ "$(sql sweep.db "SELECT count(*) FROM runs")" = 2 ] || fail "not 2 runs stored: $(cat run.out)"
[ "$(sql sweep.db "SELECT count(*) FROM runs WHERE graph LIKE 'huge%' AND status != 0
      AND error LIKE '%no strategy fits in memory%'")" = 1 ] ||
    fail "the 2 TB model is not a stored failed run: $(sql sweep.db "SELECT graph, status, error FROM runs")"
[ "$(sql sweep.db "SELECT count(*) FROM runs WHERE graph LIKE 'small%' AND status = 0")" = 1 ] ||
    fail "the 1 MB model did not run"
sql sweep.db "SELECT text FROM log JOIN runs USING (run_id) WHERE graph LIKE 'small%'" |
    grep -q 'tag-strategy {"types":\[' || fail "the ok run's log lacks its tag-strategy line"
echo "ok: bad input"
