# `merge` refuses a run id whose results differ between two files (the non-determinism the
# harness promises cannot happen), naming the run ids and the files, and writes nothing; with
# --prefer first|last it keeps one side and reports which runs it resolved.  Rows that differ only
# in timing (wall time, start and finish) are the same run, not a conflict.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" run e2e/shards.lua --quiet --shard 0/4 --results a.db
cp a.db b.db
cp a.db same.db
sql same.db "update runs set started_at = started_at + 5, finished_at = finished_at + 5, search_wall_s = 9"
ids=$(sql a.db "select run_id from runs order by run_id limit 2")
x=$(echo "$ids" | sed -n 1p); y=$(echo "$ids" | sed -n 2p)
sql b.db "update runs set best_us = best_us + 1 where run_id = '$x'; update runs set status = 1, error = 'x' where run_id = '$y'"
n=$(sql a.db "select count(*) from runs")

"$PB_BIN" merge ok.db a.db same.db > ok.out 2>&1 || fail "timing-only differences refused: $(cat ok.out)"
[ "$(sql ok.db 'select count(*) from runs')" = "$n" ] || fail "merge of equal files"

status=0
"$PB_BIN" merge out.db a.db b.db > out.txt 2> err.txt || status=$?
[ "$status" = 1 ] || fail "conflicting merge: status $status"
[ "$(wc -l < err.txt)" = 1 ] || fail "error is not one line: $(cat err.txt)"
grep -q "2 runs differ between a.db and b.db" err.txt && grep -q "$x" err.txt && grep -q "$y" err.txt &&
    grep -q -- "--prefer first|last" err.txt || fail "conflict not named: $(cat err.txt)"
[ ! -e out.db ] || fail "a refused merge wrote out.db"
cp a.db held.db
"$PB_BIN" merge held.db b.db 2> err.txt && fail "conflict with the output file accepted"
cmp -s a.db held.db || fail "a refused merge changed the output file"

"$PB_BIN" merge first.db a.db b.db --prefer first > first.txt || fail "--prefer first failed"
grep -q "2 conflicting runs resolved (--prefer first)" first.txt && grep -q "$x" first.txt ||
    fail "--prefer first did not report: $(cat first.txt)"
[ "$(sql first.db "select best_us from runs where run_id = '$x'")" = "$(sql a.db "select best_us from runs where run_id = '$x'")" ] ||
    fail "--prefer first did not keep the first file's result"
"$PB_BIN" merge last.db a.db b.db --prefer last > last.txt || fail "--prefer last failed"
grep -q "2 conflicting runs resolved (--prefer last)" last.txt || fail "--prefer last: $(cat last.txt)"
[ "$(sql last.db "select best_us from runs where run_id = '$x'")" = "$(sql b.db "select best_us from runs where run_id = '$x'")" ] &&
    [ "$(sql last.db "select status from runs where run_id = '$y'")" = 1 ] ||
    fail "--prefer last did not keep the last file's results"
[ "$(sql last.db "select count(*) from runs")" = "$n" ] || fail "--prefer last: run count"
[ "$(sql last.db "select count(*) from curve")" = "$(sql b.db "select count(*) from curve")" ] ||
    fail "--prefer last: curves not replaced with the run"
"$PB_BIN" merge bad.db a.db --prefer middle 2> err.txt && fail "--prefer middle accepted"
grep -q "prefer" err.txt || fail "--prefer middle: $(cat err.txt)"
echo ok
