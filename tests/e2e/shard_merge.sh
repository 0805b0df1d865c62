# --shard i/N splits a sweep deterministically; merged shards equal the unsharded sweep, and
# the same config and seed give identical results twice.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" run e2e/shards.lua --quiet --results full.db
"$PB_BIN" run e2e/shards.lua --quiet --results again.db -j 2
total=$(sql full.db 'select count(*) from runs')
# Per graph, device count and repeat: random with 2 budgets (it uses no traversal order, so the
# orders axis does not multiply it), round-robin in 2 orders, single-device once: 5 runs;
# 2 graphs x 2 device counts x 2 repeats x 5 = 40.
[ "$total" = 40 ] || fail "expected 40 runs, got $total"
per_placer=$(sql full.db "select placer, count(*), count(traversal) from runs group by placer order by placer" | tr '\n' ' ')
[ "$per_placer" = "random|16|0 round-robin|16|16 single-device|8|0 " ] ||
    fail "runs per placer (runs, with a traversal): $per_placer"
q='select run_id, seed, best_us, initial_us, sim_calls, status from runs order by run_id'
diff <(sql full.db "$q") <(sql again.db "$q") || fail "same config and seed gave different results"
for i in 0 1 2; do "$PB_BIN" run e2e/shards.lua --quiet --shard "$i/3" --results "s$i.db"; done
a=$(sql s0.db 'select count(*) from runs'); b=$(sql s1.db 'select count(*) from runs'); c=$(sql s2.db 'select count(*) from runs')
[ $((a + b + c)) = 40 ] || fail "shards hold $a+$b+$c runs"
"$PB_BIN" merge merged.db s0.db s1.db s2.db
diff <(sql full.db "$q") <(sql merged.db "$q") || fail "merged shards differ from the full sweep"
# Re-running a finished sweep runs nothing.
"$PB_BIN" run e2e/shards.lua --results full.db 2> rerun.log
grep -q "40 of 40 runs already in the results file; 0 to run" rerun.log || fail "rerun: $(cat rerun.log)"
echo ok
