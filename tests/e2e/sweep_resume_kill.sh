# A 200-run sweep with -j 2 killed with SIGKILL at random moments, then resumed: every run must
# end up stored exactly once, with the same results as an uninterrupted sweep.
source "$(dirname "$0")/lib/common.bash"

start=$(date +%s%N)
"$PB_BIN" run e2e/sweep200.lua -j 2 --quiet --results ref.db
ref_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "uninterrupted sweep: $ref_ms ms"
[ "$(sql ref.db 'select count(*) from runs')" = 200 ] || fail "reference sweep did not store 200 runs"

RANDOM=4242
kills=0
for attempt in 1 2 3 4 5 6; do
    "$PB_BIN" run e2e/sweep200.lua -j 2 --quiet --results killed.db &
    pid=$!
    # Kill somewhere in the first 60% of what a whole sweep takes (startup included).
    ms=$(( ref_ms * (5 + RANDOM % 55) / 100 ))
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
    if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
    wait "$pid" 2>/dev/null || true
    stored=$(sql killed.db 'select count(*) from runs' 2>/dev/null || echo 0)
    echo "attempt $attempt: $stored runs stored after kill"
done
[ "$kills" -ge 2 ] || fail "only $kills of the sweeps were still running when killed; the test needs a slower sweep"
"$PB_BIN" run e2e/sweep200.lua -j 2 --quiet --results killed.db

[ "$(sql killed.db 'select count(*) from runs')" = 200 ] || fail "resumed sweep has $(sql killed.db 'select count(*) from runs') rows, want 200"
[ "$(sql killed.db 'select count(distinct run_id) from runs')" = 200 ] || fail "duplicate run ids"
[ "$(sql killed.db "select count(*) from runs where status != 0")" = 0 ] || fail "failed runs after resume"
# Same runs, same results and same learning curves as the uninterrupted sweep.
diff <(sql ref.db 'select run_id, seed, best_us, initial_us, sim_calls from runs order by run_id') \
     <(sql killed.db 'select run_id, seed, best_us, initial_us, sim_calls from runs order by run_id') \
    || fail "resumed results differ from the uninterrupted sweep"
diff <(sql ref.db 'select run_id, episode, best_so_far_us from curve order by run_id, episode') \
     <(sql killed.db 'select run_id, episode, best_so_far_us from curve order by run_id, episode') \
    || fail "curves differ (lost or duplicated points)"
echo "ok: $kills kills, 200 runs exactly once"
