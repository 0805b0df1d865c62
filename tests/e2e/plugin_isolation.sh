# Placers that segfault, abort, hang, exit or fail create fail only their own runs; the healthy
# placer's runs complete and every failure is stored with its cause.
source "$(dirname "$0")/lib/common.bash"
# Under AddressSanitizer a segfault is caught and turned into exit(1); let the signal through so
# the test sees what a normal build sees.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0"

"$PB_BIN" run e2e/isolation.lua -j 2 --results iso.db 2> iso.log || { cat iso.log; fail "run exited non-zero"; }
status() { sql iso.db "select group_concat(distinct status) from runs where placer = '$1'"; }
error() { sql iso.db "select error from runs where placer = '$1' limit 1"; }
[ "$(sql iso.db 'select count(*) from runs')" = 18 ] || fail "expected 18 stored runs"
[ "$(status random)" = 0 ] || fail "healthy placer's runs did not all succeed"
[ "$(status crash)" = 2 ] && error crash | grep -q "signal 11" || fail "crash: $(error crash)"
[ "$(status abort)" = 2 ] && error abort | grep -q "signal 6" || fail "abort: $(error abort)"
[ "$(status hang)" = 3 ] && error hang | grep -q "timeout" || fail "hang: $(error hang)"
[ "$(status exit)" = 2 ] && error exit | grep -q "status 7" || fail "exit: $(error exit)"
[ "$(status fail-create)" = 1 ] && error fail-create | grep -q "refuses to be created" || fail "fail-create: $(error fail-create)"
grep -q "failed: crashed: signal 11" iso.log || fail "failure not reported on stderr"
echo ok
