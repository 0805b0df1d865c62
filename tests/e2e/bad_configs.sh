# Every config in tests/data/bad_configs/ must be refused by `placebench check` and by
# `placebench run`: non-zero exit (not a signal), exactly one line on stderr that names the
# config as "<file>:<line>:" and holds the text of the file's first line "-- expect: <text>", and
# no results file.
#
# Working directory: a fresh temporary folder (lib/common.bash) holding a copy of
# tests/data/graphs/, so the configs' datasets ("graphs/tiny.json") resolve and the default
# results path (results/<name>.db) would land inside it.  The configs themselves are used in
# place by absolute path, so include() checks see their real folder.  PLACEBENCH_PLUGIN_PATH
# points at the fixture plugins (simulator "fake").
source "$(dirname "$0")/lib/common.bash"

count=0
for config in "$PB_TESTDATA"/bad_configs/*.lua; do
    name=$(basename "$config")
    expect=$(sed -n '1s/^-- expect: //p' "$config")
    [ -n "$expect" ] || fail "$name: first line is not '-- expect: <text>'"
    for command in check run; do
        status=0
        "$PB_BIN" "$command" "$config" >stdout.txt 2>stderr.txt || status=$?
        err=$(cat stderr.txt)
        [ "$status" -ne 0 ] || fail "$command $name: exit status 0"
        [ "$status" -lt 128 ] || fail "$command $name: killed by a signal (status $status): $err"
        [ "$(wc -l <stderr.txt)" -eq 1 ] && [ "$(tail -c 1 stderr.txt | od -An -c | tr -d ' ')" = '\n' ] ||
            fail "$command $name: stderr is not exactly one line: $err"
        rest=${err#*"$config:"}
        [ "$rest" != "$err" ] && [[ $rest =~ ^[0-9]+: ]] ||
            fail "$command $name: error does not name '$config:<line>:': $err"
        [[ "$err" == *"$expect"* ]] || fail "$command $name: error lacks '$expect': $err"
        [ -z "$(find . -name '*.db' -o -name '*.db-journal' -o -name '*.db-wal')" ] ||
            fail "$command $name: a results file was created: $(find . -name '*.db*')"
        [ ! -e results ] || [ -z "$(ls -A results)" ] ||
            fail "$command $name: results/ is not empty: $(ls -A results)"
        [ ! -e pwned ] || fail "$command $name: the config ran a command"
    done
    echo "ok: $name: $err"
    count=$((count + 1))
done
[ "$count" -ge 10 ] || fail "only $count bad configs found in $PB_TESTDATA/bad_configs"
echo "ok: $count bad configs refused"
