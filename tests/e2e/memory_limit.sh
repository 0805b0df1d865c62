# A run that takes more memory than the config's memory_limit (GB per worker) fails alone with
# "out of memory: limit N GB", beside healthy runs; memory_limit must be a number >= 0.
source "$(dirname "$0")/lib/common.bash"
# Under the sanitizers: a failed allocation returns NULL (as glibc's does) and the segfault that
# follows is the worker's to report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:handle_segv=0"

cat > hog.lua <<'LUA'
return experiment {
  name = "hog", datasets = { "graphs/diamond.json" }, devices = { 2 },
  simulator = "fake", placer = { "hog", "single-device" }, seed = 1,
  memory_limit = 0.5,
}
LUA
"$PB_BIN" run hog.lua --results hog.db > out.txt 2>&1 || fail "run failed: $(cat out.txt)"
error=$(sql hog.db "select error from runs where placer = 'hog'")
[[ "$error" == "out of memory: limit 0.5 GB"* ]] || fail "hog: $(sql hog.db "select status, error from runs where placer = 'hog'")"
[ "$(sql hog.db "select status from runs where placer = 'single-device'")" = 0 ] || fail "healthy run failed"
sed 's/memory_limit = 0.5/memory_limit = -1/' hog.lua > negative.lua
"$PB_BIN" check negative.lua > out.txt 2>&1 && fail "memory_limit = -1 accepted"
grep -q "negative.lua:4: field 'memory_limit'" out.txt || fail "memory_limit = -1: $(cat out.txt)"
sed 's/memory_limit = 0.5/memory_limit = "lots"/' hog.lua > word.lua
"$PB_BIN" check word.lua > out.txt 2>&1 && fail "memory_limit = \"lots\" accepted"
grep -q "word.lua:4: field 'memory_limit'" out.txt || fail "memory_limit = \"lots\": $(cat out.txt)"
echo ok
