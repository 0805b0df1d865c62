# The corpus of bad inputs in tests/data/bad_inputs/ (configs, graphs, command lines): each must
# be refused with exactly one line on stderr that names the file (configs: "<file>:<line>:";
# graphs: the graph's path) and holds the expected text, a non-zero exit that is not a signal (no
# crash, no sanitizer report: a report would add lines), and no results file written or changed.
#
#   configs/*.lua  first line "-- expect: <text>"; run through `check` and `run`
#   graphs/*.json  expected text in graphs/EXPECT; run through `run` of a config naming the graph
#   args/*.args    "# expect: <text>", then the arguments (@CFG@ a good config, @GRAPH@ a good
#                  graph, @PLACEMENT@ a placement of it, @KEEP@ the results file that must not change)
# Prints the tally: inputs tried, clean errors, crashes, damaged files.
source "$(dirname "$0")/lib/common.bash"
corpus="$PB_TESTDATA/bad_inputs"

cat > good.lua <<'LUA'
return experiment {
  name = "good", datasets = { "graphs/diamond.json" }, devices = 2,
  simulator = "fake", placer = "single-device", seed = 1,
}
LUA
echo '{"placement": [0, 0, 0, 0, 0, 0]}' > placement.json
"$PB_BIN" run good.lua --quiet --results keep.db || fail "the good config does not run"
keep_sum=$(sha256sum < keep.db)
cp keep.db keep.orig

tried=0 clean=0 crashes=0 damaged=0 failures=""
# try NAME EXPECT-WHERE EXPECT-TEXT COMMAND...: one refusal, checked.
try() {
    local name=$1 where=$2 expect=$3 status=0
    shift 3
    tried=$((tried + 1))
    "$PB_BIN" "$@" > stdout.txt 2> stderr.txt || status=$?
    local err why=""
    err=$(cat stderr.txt)
    if [ "$status" -ge 128 ]; then
        crashes=$((crashes + 1)) why="killed by signal $((status - 128))"
    elif [ "$status" -eq 0 ]; then
        why="exit status 0"
    elif [ "$(wc -l < stderr.txt)" -ne 1 ]; then
        why="stderr is $(wc -l < stderr.txt) lines"
    elif [[ "$err" != *"$where"* ]]; then
        why="does not name '$where'"
    elif [[ "$err" != *"$expect"* ]]; then
        why="lacks '$expect'"
    fi
    if [ "$(sha256sum < keep.db)" != "$keep_sum" ] || ! [ "$(sql keep.db 'pragma integrity_check')" = ok ]; then
        damaged=$((damaged + 1)) why="$why; keep.db changed"
        cp keep.orig keep.db # each input is judged on its own
    fi
    local stray
    stray=$(find . -name '*.db' ! -name keep.db)
    [ -z "$stray" ] || { why="$why; wrote $stray"; rm -f $stray; }
    why=${why#; }
    if [ -z "$why" ]; then
        clean=$((clean + 1))
    else
        failures="$failures
  $name ($*): $why: $err"
    fi
}

for config in "$corpus"/configs/*.lua; do
    name=configs/$(basename "$config")
    expect=$(sed -n '1s/^-- expect: //p' "$config")
    try "$name" "$config:" "$expect" check "$config"
    try "$name" "$config:" "$expect" run "$config" --results keep.db
done
while IFS=$'\t' read -r file expect; do
    [[ "$file" == "#"* ]] && continue
    graph="$corpus/graphs/$file"
    sed "s|graphs/diamond.json|$graph|" good.lua > graph.lua
    try "graphs/$file" "$graph" "$expect" run graph.lua --results keep.db
done < "$corpus/graphs/EXPECT"
[ "$(ls "$corpus"/graphs/*.json | wc -l)" = "$(grep -vc '^#' "$corpus/graphs/EXPECT")" ] ||
    fail "graphs/EXPECT does not list every graph"
for args in "$corpus"/args/*.args; do
    expect=$(sed -n '1s/^# expect: //p' "$args")
    line=$(sed -n 2p "$args")
    line=${line//@CFG@/good.lua}
    line=${line//@GRAPH@/graphs/diamond.json}
    line=${line//@PLACEMENT@/placement.json}
    line=${line//@KEEP@/keep.db}
    read -ra words <<< "$line"
    try "args/$(basename "$args")" "" "$expect" "${words[@]}"
done

echo "bad inputs tried: $tried, clean errors: $clean, crashes: $crashes, damaged files: $damaged"
[ -z "$failures" ] || fail "not refused cleanly:$failures"
[ "$tried" -ge 60 ] || fail "only $tried bad inputs in the corpus"
echo ok
