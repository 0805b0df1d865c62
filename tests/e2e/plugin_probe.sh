# Every candidate module is first opened in a child process: a truncated .so (SIGBUS inside the
# dynamic loader), a plugin whose constructor calls exit() and one whose constructor crashes are
# listed as refused with the reason, and `list`, `check` and `run` go on with the healthy plugins.
# Modules a config does not use are never loaded into the harness process itself.
source "$(dirname "$0")/lib/common.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0:handle_sigbus=0"

mkdir -p mods
head -c 6000 "$PB_BUILD/plugins/placer-random.so" > mods/truncated.so
plugin() { # NAME CONSTRUCTOR-BODY: a valid placer whose constructor runs the body
    cat > "$1.c" <<C
#include <placebench.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void on_load(void) { $2 }
static int p_create(const pb_create_args *a, void **inst, pb_error *err)
{
    (void)a, (void)err;
    *inst = NULL;
    return PB_OK;
}
static void p_destroy(void *inst) { (void)inst; }
static int p_place(void *inst, const pb_problem *p, pb_strategy *best, double *initial,
                   pb_error *err)
{
    (void)inst, (void)initial, (void)err;
    for (int v = 0; v < p->graph->n_nodes; v++)
        best->device[v] = 0;
    return PB_OK;
}
static const pb_placer_ops p_ops = {sizeof p_ops, p_create, p_destroy, p_place, NULL, NULL, NULL, 0};
PB_PLUGIN(PB_KIND_PLACER, "$1", "0.1", "test placer", NULL, 0, &p_ops);
C
    cc -std=c11 -shared -fPIC -I"$PB_SRC/harness/include" "$1.c" -o "mods/$1.so" || fail "cannot build $1"
}
plugin ctor-exit 'exit(3);'
plugin ctor-crash 'raise(SIGSEGV);'
plugin marker 'FILE *f = fopen("loaded-by", "a"); if (f) { fprintf(f, "%ld\n", (long)getpid()); fclose(f); }'
export PLACEBENCH_PLUGIN_PATH="$WORK/mods:$PB_FIXTURES"

"$PB_BIN" list > list.out 2> list.err || fail "list failed ($?): $(cat list.err)"
grep -q "^simulator  fake" list.out || fail "healthy plugins not listed: $(cat list.out)"
grep -q "^placer     marker" list.out || fail "healthy out-of-tree plugin not listed"
grep -q "refused: .*mods/truncated.so: .*signal 7" list.out || fail "truncated: $(grep refused list.out)"
grep -q "refused: .*mods/ctor-exit.so: .*exited with status 3" list.out || fail "ctor-exit: $(grep refused list.out)"
grep -q "refused: .*mods/ctor-crash.so: .*signal 11" list.out || fail "ctor-crash: $(grep refused list.out)"

cat > probe.lua <<'LUA'
return experiment {
  name = "probe", datasets = { "graphs/diamond.json" }, devices = { 2 },
  simulator = "fake", placer = { "single-device" }, seed = 1,
}
LUA
rm -f loaded-by
"$PB_BIN" check probe.lua > check.out 2>&1 & pid=$!
wait $pid || fail "check failed: $(cat check.out)"
grep -q "1 run" check.out || fail "check: $(cat check.out)"
! grep -qx "$pid" loaded-by || fail "check loaded an unused module into the harness process"
"$PB_BIN" run probe.lua --results probe.db > run.out 2>&1 || fail "run failed: $(cat run.out)"
[ "$(sql probe.db 'select status from runs')" = 0 ] || fail "run not stored"
"$PB_BIN" check ctor-exit.lua > /dev/null 2>&1 && fail "check of a missing config succeeded"
sed 's/"single-device"/"ctor-exit"/' probe.lua > uses-broken.lua
"$PB_BIN" check uses-broken.lua > broken.out 2>&1 && fail "a config using a refused plugin passed"
[ "$(wc -l < broken.out)" = 1 ] && grep -q "uses-broken.lua:.*unknown placer 'ctor-exit'.*exited with status 3" broken.out \
    || fail "refused plugin not explained: $(cat broken.out)"
echo ok
