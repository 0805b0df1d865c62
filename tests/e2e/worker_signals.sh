# A plugin cannot kill the harness: a worker runs in its own process group under a seccomp filter
# that refuses kill/tkill/tgkill/pidfd signals aimed at its parent or the parent's process group
# (and ptrace), so the placer that tries every obvious route fails nothing but itself (here it
# goes on and places), and the sweep completes.
source "$(dirname "$0")/lib/common.bash"

cat > signals.lua <<'LUA'
return experiment {
  name = "signals", datasets = { "graphs/diamond.json" }, devices = { 2 },
  simulator = "fake", placer = { "kill-parent", "single-device" }, repeats = 2, seed = 1,
}
LUA
# Its own session, so that a signal to the harness's process group cannot reach this script.
status=0
setsid -w "$PB_BIN" run signals.lua --results signals.db > out.txt 2>&1 || status=$?
[ "$status" = 0 ] || fail "run ended with status $status (a plugin killed the harness?): $(cat out.txt)"
[ "$(sql signals.db 'select count(*) from runs')" = 4 ] || fail "runs lost: $(cat out.txt)"
[ "$(sql signals.db "select group_concat(status) from runs where placer = 'kill-parent'")" = "0,0" ] ||
    fail "kill-parent runs: $(sql signals.db "select status, error from runs")"
echo ok
