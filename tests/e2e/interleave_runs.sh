# `placebench run --interleave K`: a worker takes up to K runs of one graph (repeats, traversal
# orders) and runs them interleaved; every run stores exactly the results and learning curve it
# stores alone (timing columns aside), runs that cannot go together still run, and the option
# rejects bad values.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
export OPENBLAS_NUM_THREADS=1

"$PB_BIN" dataset gen nmt --count 1 --out nmt > /dev/null
cat > il.lua <<'LUA'
return experiment {
  name = "interleave",
  datasets = { "nmt/nmt-00.json" },
  devices = { 3 },
  placer = { { "placeto", episodes = 4 }, { "random", sim_calls = 50 } },
  embedding = { "placeto-gnn", { "placeto-gnn", message_passing = "radial" } },
  traversal = { "topo", "bfs" },
  repeats = 2,
  seed = 5,
}
LUA
"$PB_BIN" run il.lua --quiet --results alone.db
"$PB_BIN" run il.lua --quiet --results together.db --interleave 3 -j 2
n=$(sql alone.db "select count(*) from runs where status = 0")
[ "$n" -ge 9 ] || fail "expected at least 9 finished runs, got $n"
[ "$(sql together.db "select count(*) from runs where status = 0")" = "$n" ] ||
    fail "interleaved: not all $n runs finished"
# Interleaved runs share their worker's start time: some groups of 2 or 3 formed.
groups=$(sql together.db "select count(distinct started_at) from runs where placer = 'placeto'")
placeto=$(sql together.db "select count(*) from runs where placer = 'placeto'")
[ "$groups" -lt "$placeto" ] || fail "no runs were interleaved ($groups workers for $placeto runs)"
q="select run_id, episode, printf('%.17g %.17g', episode_best_us, best_so_far_us), sim_calls
   from curve order by run_id, episode"
diff <(sql alone.db "$q") <(sql together.db "$q") > /dev/null ||
    fail "interleaved runs gave other learning curves"
q="select run_id, printf('%.17g %.17g', initial_us, best_us), sim_calls, status from runs
   order by run_id"
diff <(sql alone.db "$q") <(sql together.db "$q") > /dev/null ||
    fail "interleaved runs gave other results"
[ "$(sql alone.db "select count(*) from curve")" -gt 0 ] || fail "no curve points stored"
# Bad values: a clear error and exit status 2.
for bad in 0 17 x; do
    if "$PB_BIN" run il.lua --quiet --results bad.db --interleave $bad 2> err.txt; then
        fail "--interleave $bad was accepted"
    fi
    grep -q "interleave $bad: need a number of runs from 1 to 16" err.txt ||
        fail "unclear error: $(cat err.txt)"
done
