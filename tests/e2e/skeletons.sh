# The plugin skeletons (plugins/skeleton/) load and run: the skeleton placer, simulator,
# traversal order and embedding in one sweep, beside the built-in plugins.
source "$(dirname "$0")/lib/common.bash"
: "${PB_BUILD:?}"
export PLACEBENCH_PLUGIN_PATH="$PB_BUILD/skeletons"

"$PB_BIN" list > list.out
for name in skeleton-placer skeleton-simulator skeleton-traversal skeleton-embedding; do
    grep -q "$name" list.out || fail "$name not listed: $(cat list.out)"
done
if grep -q 'refused' list.out; then fail "$(grep refused list.out)"; fi

cat > sk.lua <<'LUA'
return experiment { datasets = "graphs/diamond.json", devices = 2, seed = 5,
                    simulator = { "skeleton-simulator", "placeto" },
                    placer = { "skeleton-placer", "single-device",
                               { "placeto", episodes = 2 } },
                    embedding = "skeleton-embedding", traversal = "skeleton-traversal" }
LUA
"$PB_BIN" run sk.lua --quiet --results sk.db || fail "sweep with the skeletons failed"
[ "$(sql sk.db "select count(*) from runs where status=0")" = 6 ] || fail "$(sql sk.db "select placer, simulator, error from runs")"
# Everything on one K80 under the skeleton simulator: the summed op costs, 81 µs.
[ "$(sql sk.db "select best_us from runs where placer='single-device' and simulator='skeleton-simulator'")" = 81.0 ] || fail "skeleton simulator: $(sql sk.db "select placer, simulator, best_us from runs")"
# The greedy skeleton placer never ends worse than where it started (all on device 0).
[ "$(sql sk.db "select count(*) from runs where placer='skeleton-placer' and best_us <= initial_us")" = 2 ] || fail "skeleton placer got worse"
echo ok
