# Two `run` processes on one results file share the work: each claims a run in the file before
# starting it, so every run is computed once (not once per process) and stored once.  A claim
# whose process is gone (killed) expires: the next run takes the run over.
source "$(dirname "$0")/lib/common.bash"

cat > slow.lua <<'LUA'
return experiment {
  name = "slow", datasets = { "graphs/diamond.json" }, devices = { 2, 3 },
  simulator = "fake", placer = "slow", repeats = 4, seed = 1,
}
LUA
"$PB_BIN" run slow.lua --results shared.db 2> a.log & a=$!
"$PB_BIN" run slow.lua --results shared.db 2> b.log & b=$!
wait $a || fail "first run failed: $(cat a.log)"
wait $b || fail "second run failed: $(cat b.log)"
[ "$(sql shared.db 'select count(*) from runs')" = 8 ] || fail "runs stored: $(sql shared.db 'select count(*) from runs')"
ran() { sed -n 's/^done: .*, \([0-9]*\) ok, \([0-9]*\) failed.*/\1 \2/p' "$1" | awk '{print $1 + $2}'; }
ra=$(ran a.log); rb=$(ran b.log)
[ -n "$ra" ] && [ -n "$rb" ] || fail "no summary: $(cat a.log b.log)"
[ $((ra + rb)) = 8 ] || fail "the two processes computed $ra + $rb runs for 8"
[ "$ra" -ge 1 ] && [ "$rb" -ge 1 ] || fail "one process did all the work ($ra, $rb)"
[ "$(sql shared.db 'select count(*) from claim')" = 0 ] || fail "claims left behind"

# A process killed while it holds claims: its claims expire, the next run does the runs.
"$PB_BIN" run slow.lua --results killed.db 2> k.log & k=$!
while [ "$(sql killed.db 'select count(*) from runs' 2>/dev/null || echo 0)" -lt 2 ]; do sleep 0.05; done
kill -9 $k; wait $k 2>/dev/null || true
[ "$(sql killed.db 'select count(*) from claim')" -ge 1 ] || fail "no claim held by the killed process"
"$PB_BIN" run slow.lua --results killed.db 2> r.log || fail "resume failed: $(cat r.log)"
[ "$(sql killed.db 'select count(*) from runs')" = 8 ] || fail "resume left runs: $(cat r.log)"
echo ok
