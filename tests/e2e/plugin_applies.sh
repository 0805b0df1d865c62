# What a placer can run with (ABI 1.4): a sweep makes no runs of a placer/simulator pair that does
# not apply and says why (check, run); `place` refuses such a pair before anything runs.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

cat > mixed.lua <<'LUA'
return experiment {
  name      = "mixed",
  datasets  = "graphs/tiny.json",
  devices   = 2,
  cluster   = "placeto-k80",
  simulator = { "placeto", "topology" },
  placer    = { "random", "dp-nccl", "greedy" },
  sim_calls = 5,
}
LUA
"$PB_BIN" check mixed.lua > check.out || fail "check failed: $(cat check.out)"
# random runs on both simulators, dp-nccl (replicated strategies) on topology only, greedy (a
# HeterPS scheduler) on neither.
grep -q "^mixed.lua: experiment 'mixed', 3 runs over 1 graphs" check.out || fail "not 3 runs: $(head -1 check.out)"
[ "$(grep -c '^skipped: ' check.out)" = 3 ] || fail "not 3 skipped pairs: $(cat check.out)"
grep -qx "skipped: placer 'dp-nccl' returns replicated strategies and simulator 'placeto' evaluates plain placements (no runs)" check.out ||
    fail "dp-nccl on placeto: $(cat check.out)"
for sim in placeto topology; do
    grep -qx "skipped: placer 'greedy' works only with simulator heterps, not '$sim' (no runs)" check.out ||
        fail "greedy on $sim: $(cat check.out)"
done
"$PB_BIN" run mixed.lua -q 2> run.err || fail "run failed: $(cat run.err)"
[ "$(sql results/mixed.db "select group_concat(placer || '@' || simulator, ' ') from (select placer, simulator from runs order by 1, 2)")" = \
  "dp-nccl@topology random@placeto random@topology" ] || fail "stored runs: $(sql results/mixed.db 'select placer, simulator from runs')"

if "$PB_BIN" place --graph graphs/tiny.json --placer greedy --devices 2 --simulator topology > out.txt 2> err.txt; then
    fail "greedy on the topology simulator ran: $(cat out.txt)"
fi
[ "$(cat err.txt)" = "placebench: placer 'greedy' works only with simulator heterps, not 'topology'" ] ||
    fail "unclear refusal: $(cat err.txt)"
echo ok
