# A 200-run sweep with -j 2 killed with SIGKILL at random moments, then resumed: every run must
# end up stored exactly once, with the same results as an uninterrupted sweep.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" run e2e/sweep200.lua -j 2 --quiet --results ref.db
[ "$(sql ref.db 'select count(*) from runs')" = 200 ] || fail "reference sweep did not store 200 runs"

count() { sql killed.db 'select count(*) from runs' 2>/dev/null || echo 0; }

# Each attempt waits until a random number of further runs is stored (so the kill lands in the
# middle of the sweep whatever the machine's speed), then kills the whole sweep with SIGKILL.
# The first attempt is killed during start-up, before any run can have finished.
RANDOM=4242
kills=0
for attempt in 1 2 3 4 5 6; do
    before=$(count)
    "$PB_BIN" run e2e/sweep200.lua -j 2 --quiet --results killed.db &
    pid=$!
    if [ "$attempt" -gt 1 ]; then
        target=$((before + 10 + RANDOM % 20))
        while kill -0 "$pid" 2>/dev/null && [ "$(count)" -lt "$target" ]; do sleep 0.02; done
    fi
    if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
    wait "$pid" 2>/dev/null || true
    echo "attempt $attempt: $(count) runs stored after the kill"
done
[ "$kills" -ge 5 ] || fail "only $kills sweeps were still running when killed"
[ "$(count)" -lt 200 ] || fail "the sweep finished before the last kill; nothing left to resume"
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
