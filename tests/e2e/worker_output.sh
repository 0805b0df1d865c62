# What a plugin writes on stdout or stderr goes into its run's log (kept up to a limit, the rest
# counted), not into the output of `placebench run`; `export --logs` prints the logs.
source "$(dirname "$0")/lib/common.bash"

cat > chatty.lua <<'LUA'
return experiment {
  name = "talk", datasets = { "graphs/diamond.json" }, devices = { 2 },
  simulator = "fake", placer = { "chatty", "single-device" }, seed = 1,
}
LUA
"$PB_BIN" run chatty.lua -j 2 --results chatty.db > out.txt 2> err.txt || fail "run failed: $(cat err.txt)"
! grep -q "chatty std" out.txt || fail "plugin output on the stdout of run: $(grep -c chatty out.txt) lines"
! grep -q "chatty std" err.txt || fail "plugin output on run's stderr: $(grep chatty err.txt | head -3)"
[ "$(sql chatty.db "select status from runs where placer = 'chatty'")" = 0 ] || fail "chatty run failed"
log=$(sql chatty.db "select text from log join runs using(run_id) where placer = 'chatty'")
[[ "$log" == *"chatty stdout line 0"* && "$log" == *"chatty stdout line 99"* ]] || fail "stdout not in the log"
[[ "$log" == *"bytes of output not kept"* ]] || fail "truncation not said: $(echo "$log" | tail -2)"
size=$(sql chatty.db "select length(text) from log join runs using(run_id) where placer = 'chatty'")
[ "$size" -le 70000 ] || fail "log of $size bytes kept"
[ "$(sql chatty.db "select count(*) from log join runs using(run_id) where placer = 'single-device'")" = 0 ] ||
    fail "a silent run has a log"
"$PB_BIN" export chatty.db --logs --format jsonl > logs.jsonl || fail "export --logs failed"
grep -q '"text": *"chatty stdout line 0' logs.jsonl || fail "export --logs: $(head -c 300 logs.jsonl)"
# A merge keeps the logs.
"$PB_BIN" merge merged.db chatty.db > /dev/null || fail "merge failed"
[ "$(sql merged.db "select count(*) from log")" = 1 ] || fail "merge lost the log"
echo ok
