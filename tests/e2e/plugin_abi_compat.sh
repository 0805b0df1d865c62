# Plugins built against the ABI 1.1 header (tests/fixtures/abi-1-1) load and run on this
# harness: the loader reads their option table at the 1.1 stride, a 1.1 placer gets the 1.1
# pb_problem (budget embedded) and passes 1.1 strategies, a 1.1 simulator gets 1.1 strategies.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" list > list.out
grep -Eq '^ *placer +abi-1\.1 ' list.out || grep -q 'abi-1.1 ' list.out || fail "1.1 placer not listed: $(cat list.out)"
grep -q 'abi-1.1-sim' list.out || fail "1.1 simulator not listed"
if grep -q 'refused: .*abi-1-1' list.out; then fail "a 1.1 fixture was refused: $(cat list.out)"; fi

# diamond.json: op costs 10 + 20 + 30 + 7 + 9 + 5 = 81 µs.
cat > compat.lua <<'LUA'
return experiment { datasets = "graphs/diamond.json", devices = 3, sim_calls = 4,
                    simulator = { "fake", "abi-1.1-sim" },
                    placer = { { "abi-1.1", device = 2 }, { "single-device", device = 2 } } }
LUA
"$PB_BIN" run compat.lua --quiet --results compat.db || fail "sweep with 1.1 plugins failed"
[ "$(sql compat.db "select count(*) from runs where status=0")" = 4 ] || fail "$(sql compat.db "select placer, simulator, error from runs")"
# The 1.1 option 'device' (second entry) was read: all on device 2, under both simulators.
[ "$(sql compat.db "select best_us from runs where placer='abi-1.1' and simulator='fake'")" = 81.0 ] || fail "1.1 placer on fake: $(sql compat.db "select best_us from runs")"
[ "$(sql compat.db "select best_us from runs where placer='single-device' and simulator='abi-1.1-sim'")" = 243.0 ] || fail "1.1 simulator: $(sql compat.db "select placer, simulator, best_us from runs")"
[ "$(sql compat.db "select best_us from runs where placer='abi-1.1' and simulator='abi-1.1-sim'")" = 243.0 ] || fail "1.1 placer on the 1.1 simulator"
# The embedded 1.1 budget was read: sim_calls = 4 calls made by the placer.
[ "$(sql compat.db "select group_concat(sim_calls) from runs where placer='abi-1.1'")" = "4,4" ] || fail "budget: $(sql compat.db "select simulator, sim_calls from runs where placer='abi-1.1'")"
echo ok
