# A module the system loader cannot open is refused with the loader's own reason, not libltdl's
# "file not found": a plugin whose dependency library is missing names that library, and a text
# file named .so is named as not an object file.
source "$(dirname "$0")/lib/common.bash"

mkdir -p mods
echo 'int gone(void) { return 1; }' > gone.c
cc -shared -fPIC gone.c -o libgone.so || fail "cannot build the helper library"
cat > needs.c <<'C'
#include <placebench.h>
int gone(void);
static int n_create(const pb_create_args *a, void **inst, pb_error *err)
{
    (void)a;
    (void)err;
    *inst = (void *)(long)gone();
    return PB_OK;
}
static void n_destroy(void *inst) { (void)inst; }
static int n_place(void *inst, const pb_problem *p, pb_strategy *best, double *initial,
                   pb_error *err)
{
    (void)inst, (void)p, (void)best, (void)initial, (void)err;
    return PB_OK;
}
static const pb_placer_ops n_ops = {sizeof n_ops, n_create, n_destroy, n_place, NULL, NULL, NULL};
PB_PLUGIN(PB_KIND_PLACER, "needs-gone", "0.1", "needs libgone.so", NULL, 0, &n_ops);
C
cc -std=c11 -shared -fPIC -I"$PB_SRC/harness/include" needs.c -L. -lgone -o mods/needs.so \
    || fail "cannot build the plugin"
rm libgone.so
echo "not a shared object" > mods/text.so

PLACEBENCH_PLUGIN_PATH="$WORK/mods" "$PB_BIN" list > list.out || fail "list failed: $(cat list.out)"
grep -q "refused: .*mods/needs.so: cannot load: libgone.so: cannot open shared object file" list.out \
    || fail "missing library not named: $(grep refused list.out)"
grep -q "refused: .*mods/text.so: cannot load: .*\(file too short\|invalid ELF header\)" list.out \
    || fail "text file not named as such: $(grep refused list.out)"
if grep -q "file not found" list.out; then fail "libltdl's message left: $(grep refused list.out)"; fi
echo ok
