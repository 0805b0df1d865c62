# An out-of-tree placer built with `cc -shared -fPIC my.c $(pkg-config --cflags --libs
# placebench)` against the installed header runs in a sweep, found through the config's
# plugin_path and through PLACEBENCH_PLUGIN_PATH.
source "$(dirname "$0")/lib/common.bash"
: "${PB_BUILD:?}"

cmake --install "$PB_BUILD" --prefix "$WORK/prefix" > install.log 2>&1 || { cat install.log; fail "cmake --install failed"; }
export PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig:$WORK/prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig"
pkg-config --exists placebench || fail "pkg-config does not find the installed placebench.pc"
mkdir -p myplugins
cat > my.c <<'C'
/* my.c — an out-of-tree placer: all nodes on the last device. */
#include <placebench.h>
#include <stdlib.h>
static int my_create(const pb_create_args *a, void **inst, pb_error *err)
{
    (void)err;
    *inst = (void *)a->host;
    return PB_OK;
}
static void my_destroy(void *inst) { (void)inst; }
static int my_place(void *inst, const pb_problem *p, pb_strategy *best, double *initial,
                    pb_error *err)
{
    const pb_host *h = inst;
    for (int v = 0; v < p->graph->n_nodes; v++)
        best->device[v] = p->cluster->n_devices - 1;
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    *initial = -1;
    return h->simulate(h->ctx, best, &ev, err);
}
static const pb_placer_ops my_ops = {sizeof my_ops, my_create, my_destroy, my_place, NULL, NULL, NULL};
PB_PLUGIN(PB_KIND_PLACER, "last-device", "0.1", "out-of-tree example", NULL, 0, &my_ops);
C
cc -std=c11 -Wall -Werror -shared -fPIC my.c $(pkg-config --cflags --libs placebench) -o myplugins/my.so \
    || fail "the out-of-tree plugin does not build with the pkg-config flags"
cat > oot.lua <<'LUA'
return experiment { datasets = "graphs/diamond.json", devices = { 2, 3 }, simulator = "placeto",
                    placer = { "last-device", "single-device" }, plugin_path = "myplugins" }
LUA
unset PLACEBENCH_PLUGIN_PATH
"$WORK/prefix/bin/placebench" run oot.lua --quiet --results oot.db || fail "the installed placebench could not run the sweep"
[ "$(sql oot.db "select count(*) from runs where placer='last-device' and status=0")" = 2 ] || fail "out-of-tree placer runs missing"
# Placing everything on one device gives the same step time whichever device it is.
diff <(sql oot.db "select n_devices, best_us from runs where placer='last-device' order by n_devices") \
     <(sql oot.db "select n_devices, best_us from runs where placer='single-device' order by n_devices") \
    || fail "last-device and single-device disagree"
# Into a file: with pipefail, `list | grep -q` fails when grep exits before list has written all.
PLACEBENCH_PLUGIN_PATH="$WORK/myplugins" "$WORK/prefix/bin/placebench" list placer > list.out \
    || fail "list failed"
grep -q "last-device" list.out || fail "PLACEBENCH_PLUGIN_PATH not searched: $(cat list.out)"
echo ok
