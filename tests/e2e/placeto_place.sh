# placeto with placeto-gnn: `placebench place` improves on the single-device placement it starts
# from, writes a placement that `simulate` evaluates to the reported step time, and the same
# config and seed give identical learning curves twice (sequentially and with -j 2).
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
export OPENBLAS_NUM_THREADS=1

"$PB_BIN" dataset gen nmt --count 1 --out nmt > /dev/null
g=nmt/nmt-00.json
json=$("$PB_BIN" place --graph "$g" --placer placeto --embedding placeto-gnn --devices 3 \
    --episodes 10 --seed 3 --json --out best.json)
read -r initial best calls <<< "$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["initial_step_time_us"], d["best_step_time_us"], d["simulator_calls"])' "$json")"
single=$("$PB_BIN" place --graph "$g" --placer single-device --devices 3 --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["best_step_time_us"])')
python3 -c "import sys; sys.exit(0 if float('$initial') == float('$single') else 1)" ||
    fail "placeto's initial placement ($initial us) is not the single-device one ($single us)"
python3 -c "import sys; sys.exit(0 if float('$best') < float('$initial') else 1)" ||
    fail "placeto did not improve on the single-device placement: $json"
[ "$calls" -gt 10 ] && [ "$calls" -le $((10 * (192 + 1))) ] ||
    fail "$calls simulator calls for 10 episodes of 193 steps"
"$PB_BIN" simulate --graph "$g" --placement best.json --devices 3 --json |
    python3 -c "import json, sys; d = json.load(sys.stdin); sys.exit(0 if d['step_time_us'] == float('$best') else 1)" ||
    fail "the written placement does not simulate to $best us"
# A search placer gets exactly the simulator calls it is given.
n=$("$PB_BIN" place --graph "$g" --placer random --sim-calls 77 --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["simulator_calls"])')
[ "$n" = 77 ] || fail "random made $n simulator calls, not 77"
# Bad input: a clear one-line error and a non-zero exit.
if "$PB_BIN" place --graph "$g" --placer placeto --devices 3 2> err.txt; then
    fail "placeto without an embedding succeeded"
fi
grep -q "needs an embedding" err.txt || fail "unclear error: $(cat err.txt)"
if "$PB_BIN" place --graph "$g" --placer placeto --embedding placeto-gnn --opt placer.rewrd=forks 2> err.txt; then
    fail "an unknown option was accepted"
fi
grep -q "did you mean 'reward'" err.txt || fail "unclear error: $(cat err.txt)"

# Determinism: the curve table of the same config and seed, twice.
cat > det.lua <<'LUA'
return experiment {
  name = "placeto-determinism",
  datasets = { "nmt/nmt-00.json" },
  devices = { 3, 5 },
  placer = { { "placeto", episodes = 6, reward = { "intended", "forks" } } },
  embedding = { "placeto-gnn", { "placeto-gnn", message_passing = "radial" } },
  seed = 11,
}
LUA
"$PB_BIN" run det.lua --quiet --results a.db
"$PB_BIN" run det.lua --quiet --results b.db -j 2
[ "$(sql a.db "select count(*) from runs where status = 0")" = 8 ] || fail "not all 8 runs finished"
[ "$(sql a.db "select count(*) from curve")" = 48 ] || fail "expected 6 curve points per run"
q='select run_id, episode, episode_best_us, best_so_far_us, sim_calls from curve order by run_id, episode'
diff <(sql a.db "$q") <(sql b.db "$q") > /dev/null || fail "same config and seed gave different curves"
q='select run_id, initial_us, best_us, sim_calls from runs order by run_id'
diff <(sql a.db "$q") <(sql b.db "$q") > /dev/null || fail "same config and seed gave different results"
# The reward sign matters: the two signs do not learn the same curves.
[ "$(sql a.db "select count(distinct best_us) from runs")" -gt 1 ] || fail "all runs ended equal"
echo ok
