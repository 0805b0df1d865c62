# Refusals say what is wrong: a .so without a placebench descriptor is listed as refused (not
# skipped silently), and a dataset or graph path that exists but is not a regular file (a device,
# a FIFO) is named as such instead of "not found" (and a FIFO is not waited on).
source "$(dirname "$0")/lib/common.bash"

mkdir -p mods
echo 'int helper(void) { return 1; }' > helper.c
cc -shared -fPIC helper.c -o mods/helper.so || fail "cannot build the helper library"
PLACEBENCH_PLUGIN_PATH="$WORK/mods:$PB_FIXTURES" "$PB_BIN" list > list.out || fail "list failed"
grep -q "refused: .*mods/helper.so: not a placebench plugin (no 'placebench_plugin' symbol)" list.out \
    || fail "a .so without a descriptor is not listed as refused: $(grep refused list.out)"

mkfifo graph.fifo
for path in /dev/null "$WORK/graph.fifo"; do
    cat > special.lua <<LUA
return experiment {
  name = "special", datasets = { "$path" }, devices = { 2 },
  simulator = "fake", placer = "single-device", seed = 1,
}
LUA
    status=0
    timeout 20 "$PB_BIN" check special.lua > out.txt 2>&1 || status=$?
    [ "$status" = 1 ] || fail "check of dataset $path: status $status: $(cat out.txt)"
    grep -q "special.lua:2: dataset '$path' is not a regular file or folder" out.txt \
        || fail "dataset $path: $(cat out.txt)"
    echo '{"placement": [0, 0, 0, 0, 0, 0]}' > p.json
    status=0
    timeout 20 "$PB_BIN" simulate --graph "$path" --placement p.json > out.txt 2>&1 || status=$?
    [ "$status" = 1 ] || fail "simulate --graph $path: status $status: $(cat out.txt)"
    grep -q "$path: not a regular file" out.txt || fail "simulate --graph $path: $(cat out.txt)"
done
echo ok
