# gdp on the topology simulator and the GDP P100 machine: `placebench place --json` gives a
# feasible placement that `simulate` reproduces; the same seed gives the same placement and the
# same learning curves (also through `run -j 2`); parameters saved by one run start a zero-shot
# and a fine-tuning run; bad options and files fail with clear errors.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
export OPENBLAS_NUM_THREADS=1

"$PB_BIN" dataset gen nmt --count 1 --out nmt > /dev/null
g=nmt/nmt-00.json
short=(--opt placer.iterations=3 --opt placer.rollouts=12 --opt placer.minibatches=3
       --opt placer.epochs=2)
field() { python3 -c "import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

# The literal command of the issue: 2 devices of gdp-p100 are the host CPU and one P100.
json=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 2 --json "${short[@]}")
[ "$(field "$json" feasible)" = True ] || fail "infeasible placement on 2 devices: $json"
# 2 baseline calls for T_ref, then 3 iterations of 12 rollouts.
[ "$(field "$json" simulator_calls)" = 38 ] || fail "expected 38 simulator calls: $json"

# A sim_calls budget covers every simulator call, T_ref's two included.
n=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --sim-calls 30 --json --opt placer.rollouts=8 --opt placer.minibatches=2 \
    --opt placer.epochs=1)
[ "$(field "$n" simulator_calls)" = 30 ] || fail "gdp made other than its 30 simulator calls: $n"

# Two P100s: the written placement simulates to the reported time, and it is the best sample.
a=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --json --seed 4 --out a.json "${short[@]}" --opt placer.save=p.json)
best=$(field "$a" best_step_time_us)
python3 -c "import sys; sys.exit(0 if float('$best') <= float('$(field "$a" initial_step_time_us)') else 1)" ||
    fail "best above the first sample: $a"
"$PB_BIN" simulate --graph "$g" --placement a.json --simulator topology --cluster gdp-p100 \
    --devices 3 --json |
    python3 -c "import json, sys; d = json.load(sys.stdin); sys.exit(0 if d['step_time_us'] == float('$best') else 1)" ||
    fail "the written placement does not simulate to $best us"
python3 -c "import json; d = json.load(open('a.json')); assert set(d.values()) <= {1, 2}, d" ||
    fail "gdp put work on the host CPU (include_cpu is off)"
# Same seed: same result and placement; another seed: another search.
b=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --json --seed 4 --out b.json "${short[@]}")
[ "$(field "$a" best_step_time_us)" = "$(field "$b" best_step_time_us)" ] &&
    [ "$(field "$a" initial_step_time_us)" = "$(field "$b" initial_step_time_us)" ] ||
    fail "same seed, different results: $a / $b"
cmp -s a.json b.json || fail "same seed, different placements"
c=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --json --seed 5 "${short[@]}")
[ "$(field "$a" initial_step_time_us)" != "$(field "$c" initial_step_time_us)" ] ||
    fail "seeds 4 and 5 sampled the same first placement"

# Saved parameters: zero-shot (argmax, one simulator call after the 2 for T_ref) and
# fine-tuning (50 rollouts) start from them.
z=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --json --opt placer.mode=zeroshot --opt placer.load=p.json)
[ "$(field "$z" simulator_calls)" = 3 ] || fail "zero-shot made other than 3 calls: $z"
f=$("$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --json --opt placer.mode=finetune --opt placer.load=p.json)
[ "$(field "$f" simulator_calls)" = 52 ] || fail "fine-tuning made other than 2 + 50 calls: $f"

# GDP-batch: one parameter set trained on two graphs (rollouts split round-robin: 2 T_ref calls
# + 2 iterations x 5 per graph), then zero-shot and fine-tuning on a held-out third graph.
"$PB_BIN" dataset gen nmt --count 3 --out nmt3 > /dev/null
t=$("$PB_BIN" train --graph nmt3/nmt-00.json --graph nmt3/nmt-01.json --placer gdp \
    --simulator topology --cluster gdp-p100 --devices 3 --opt placer.iterations=2 \
    --opt placer.rollouts=10 --opt placer.minibatches=2 --opt placer.epochs=1 --save batch.json \
    --json)
python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert [g['simulator_calls'] for g in d['graphs']] == [12, 12], d
assert all(g['best_step_time_us'] > 0 for g in d['graphs']), d" "$t" ||
    fail "unexpected batch training result: $t"
z=$("$PB_BIN" place --graph nmt3/nmt-02.json --placer gdp --simulator topology \
    --cluster gdp-p100 --devices 3 --json --opt placer.mode=zeroshot --opt placer.load=batch.json)
[ "$(field "$z" feasible)" = True ] || fail "zero-shot on the held-out graph: $z"
if "$PB_BIN" train --graph "$g" --graph nmt3/nmt-01.json --placer random 2> err.txt; then
    fail "train accepted a placer without train()"
fi
grep -q "does not train on several graphs" err.txt || fail "unclear error: $(cat err.txt)"

# Bad input.
if "$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --opt placer.mode=zeroshot 2> err.txt; then
    fail "zero-shot without parameters succeeded"
fi
grep -q "needs a parameter file in option 'load'" err.txt || fail "unclear error: $(cat err.txt)"
if "$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 3 --opt placer.mode=zeroshot --opt placer.load=p.json --opt placer.d_inner=64 \
    2> err.txt; then
    fail "parameters of another network shape were accepted"
fi
grep -q "p.json" err.txt || fail "the error does not name the file: $(cat err.txt)"
if "$PB_BIN" place --graph "$g" --placer gdp --opt placer.rollout=3 2> err.txt; then
    fail "an unknown option was accepted"
fi
grep -q "did you mean 'rollouts'" err.txt || fail "unclear error: $(cat err.txt)"
if "$PB_BIN" place --graph "$g" --placer gdp --simulator topology --cluster gdp-p100 \
    --devices 9 --opt placer.include_cpu=true 2> err.txt; then
    fail "9 devices to choose from (above d_max 8) were accepted"
fi
grep -q "d_max" err.txt || fail "unclear error: $(cat err.txt)"

# Determinism of the curves through a sweep, sequential and with 2 workers.
cat > det.lua <<'LUA'
return experiment {
  name = "gdp-determinism",
  datasets = { "nmt/nmt-00.json" },
  devices = { 3, 5 },
  cluster = "gdp-p100",
  simulator = "topology",
  placer = { { "gdp", iterations = 3, rollouts = 8, minibatches = 2, epochs = 1,
               superposition = { true, false } } },
  seed = 7,
}
LUA
"$PB_BIN" run det.lua --quiet --results a.db
"$PB_BIN" run det.lua --quiet --results b.db -j 2
[ "$(sql a.db "select count(*) from runs where status = 0")" = 4 ] || fail "not all 4 runs finished"
[ "$(sql a.db "select count(*) from curve")" = 12 ] || fail "expected 3 curve points per run"
q='select run_id, episode, episode_best_us, best_so_far_us, sim_calls from curve order by run_id, episode'
diff <(sql a.db "$q") <(sql b.db "$q") > /dev/null || fail "same config and seed gave different curves"
q='select run_id, initial_us, best_us, sim_calls from runs order by run_id'
diff <(sql a.db "$q") <(sql b.db "$q") > /dev/null || fail "same config and seed gave different results"
echo "gdp_place: ok"
