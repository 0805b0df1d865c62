# What a new user does (README, "Write your own placer"): `placebench new placer myplacer`,
# build it with its generated CMake project against the installed placebench, and
# `placebench compare` it on a suite: a leaderboard with it ranked, plots, and the built-in
# placers' runs cached for the next comparison.
source "$(dirname "$0")/lib/common.bash"
: "${PB_BUILD:?}"

cmake --install "$PB_BUILD" --prefix "$WORK/prefix" > install.log 2>&1 || { cat install.log; fail "cmake --install failed"; }
export PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig:$WORK/prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig"
unset PLACEBENCH_PLUGIN_PATH
pb="$WORK/prefix/bin/placebench"

"$pb" new placer myplacer > new.out || fail "placebench new placer failed"
[ -f myplacer/myplacer.c ] && [ -f myplacer/CMakeLists.txt ] || fail "new placer did not write its two files"
"$pb" new placer myplacer > /dev/null 2> again.err && fail "new placer overwrote an existing project"
grep -q "exists already" again.err || fail "no 'exists already' error: $(cat again.err)"
"$pb" new placer My_Placer > /dev/null 2>&1 && fail "a name with capitals and '_' was accepted"

cmake -S myplacer -B myplacer/build -DCMAKE_C_FLAGS="-Werror" > cmake.log 2>&1 || { cat cmake.log; fail "the generated project does not configure"; }
cmake --build myplacer/build > build.log 2>&1 || { cat build.log; fail "the generated placer does not build warning-free"; }
[ -f myplacer/build/myplacer.so ] || fail "no myplacer.so"

"$pb" compare myplacer/build/myplacer.so --suite e2e/suite_tiny.lua -j 2 > board.md 2> compare.err \
    || { cat compare.err; fail "compare failed"; }

# One table per problem (3 graphs x 2 device counts), each with the 8 placers and a rank for
# myplacer; an overall table.
[ "$(grep -c '^### .*devices, placeto-k80, placeto$' board.md)" = 6 ] || fail "not 6 problem tables"
[ "$(grep -c '^| [0-9]* | \*\*myplacer\*\* | [0-9.]* | ' board.md)" = 6 ] || fail "myplacer not ranked on every problem"
for p in single-device "round-robin / topo" random m-topo m-etf m-sct "placeto / placeto-gnn / topo"; do
    [ "$(grep -c "^| [0-9]* | $p | " board.md)" = 6 ] || fail "$p missing from a problem table"
done
grep -q '^| \*\*myplacer\*\* | [0-9.]* | [0-9]* | 6 |$' board.md || fail "myplacer not in the overall table"

# Within each table the ranks follow the step times: ascending times, and equal times share a
# rank, the next distinct time taking the rank after its predecessors.
awk -F'|' '/^### /{n=0; prev=""; next}
           /^\| [0-9]+ \|/ && $4 ~ /[0-9]/ {n++; t=$4+0; r=$2+0
               if (prev != "" && t < prev) bad=1
               if (prev != "" && t == prev && r != prank) bad=1
               if (prev != "" && t > prev && r != n) bad=1
               if (prev == "" && r != 1) bad=1
               prev=t; prank=r}
           END {exit bad}' board.md || fail "ranks do not follow the step times"

# The generated placer starts from everything on device 0 (single-device's placement) and only
# keeps moves that lower the step time, so it is never slower than single-device.
awk -F'|' '/^### /{if (m != "" && m > s) bad=1; m=""; s=""}
           $3 ~ /\*\*myplacer\*\*/ {m=$4+0}
           $3 ~ /^ single-device $/ {s=$4+0}
           END {if (m != "" && m > s) bad=1; exit bad}' board.md || fail "myplacer slower than single-device somewhere"

for f in compare_scatter.png compare_scatter.svg compare_ranks.png compare_ranks.svg; do
    [ -s "plots/out/suite-tiny-myplacer/$f" ] || fail "plot $f missing"
done

# The built-in placers ran once: a second comparison reuses all 84 of their runs and redoes
# myplacer's 12.
[ "$(sql results/suite-tiny.db "select count(*) from runs where status=0")" = 84 ] || fail "built-in runs not all stored ok"
[ "$(sql results/suite-tiny-myplacer.db "select count(*) from runs where status=0 and placer='myplacer'")" = 12 ] || fail "myplacer runs not stored"
"$pb" compare myplacer/build/myplacer.so --suite e2e/suite_tiny.lua --no-plot > board2.md 2> compare2.err || fail "second compare failed"
grep -q "built-in placers: 84 already stored, 0 ok" compare2.err || fail "built-in runs redone: $(cat compare2.err)"
grep -q "myplacer: 0 already stored, 12 ok" compare2.err || fail "myplacer runs not redone: $(cat compare2.err)"

# A built-in placer or a plugin of another kind is refused with the reason.
random_so=$(find "$WORK/prefix" -name placer-random.so | head -1)
topo_so=$(find "$WORK/prefix" -name traversal-topo.so | head -1)
"$pb" compare "$random_so" --suite e2e/suite_tiny.lua --quiet 2> own.err && fail "a built-in placer was compared"
grep -q "one of the suite's own placers" own.err || fail "no reason for refusing a built-in: $(cat own.err)"
"$pb" compare "$topo_so" --suite e2e/suite_tiny.lua --quiet 2> kind.err && fail "a traversal plugin was compared"
grep -q "a traversal plugin, not a placer" kind.err || fail "no reason for refusing a traversal: $(cat kind.err)"

# A suite folder: one experiment per simulator.  Placers that do not apply to a problem file's
# simulator are skipped with the reason; the HeterPS problem is ranked by monetary cost.
"$pb" compare myplacer/build/myplacer.so --suite e2e/mixed --no-plot > mixed.md 2> mixed.err \
    || { cat mixed.err; fail "compare on a suite folder failed"; }
grep -q "skipped: placer 'dp-nccl' returns replicated strategies and simulator 'placeto' evaluates plain placements" mixed.err \
    || fail "dp-nccl not skipped with its reason: $(cat mixed.err)"
grep -q "skipped: placer 'greedy' works only with simulator heterps, not 'placeto'" mixed.err \
    || fail "greedy not skipped with its reason: $(cat mixed.err)"
grep -q '^## myplacer on suite-mixed' mixed.md || fail "no suite-mixed leaderboard: $(head -3 mixed.md)"
[ "$(grep -c '^### ' mixed.md)" = 3 ] || fail "not 2 problem tables and the overall one: $(grep '^###' mixed.md)"
grep -q '^### nce, 2 devices, heterps-types, heterps (ranked by monetary cost of feasible plans)$' mixed.md \
    || fail "the HeterPS problem is not ranked by cost: $(grep '^###' mixed.md)"
# In the cost table (columns: rank, placer, step time, cost, ...) ranks follow the costs, and
# brute force, exact over all 2^L plans, ranks first (perhaps tied).
awk -F'|' '/^### .*heterps/{on=1; next} /^### /{on=0}
           on && /^\| [0-9]+ \|/ && $5 ~ /[0-9]/ {n++; c=$5+0; r=$2+0
               if (prev != "" && c < prev) bad=1
               if (prev != "" && c > prev && r != n) bad=1
               if ($3 ~ /brute-force/ && r != 1) bad=1
               prev=c}
           END {exit bad || n < 5}' mixed.md || fail "cost ranks wrong: $(cat mixed.md)"
[ "$(sql results/mixed-placeto.db "select count(*) from runs where placer in ('dp-nccl','greedy')")" = 0 ] \
    || fail "skipped placers made runs"
echo ok
