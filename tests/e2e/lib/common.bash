# common.bash — helpers shared by the end-to-end tests (sourced, not run).
set -euo pipefail
: "${PB_BIN:?PB_BIN must name the placebench binary}"
: "${PB_TESTDATA:?}"
: "${PB_FIXTURES:?}"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$PB_TESTDATA/graphs" "$PB_TESTDATA/e2e" "$WORK/"
cd "$WORK"
export PLACEBENCH_PLUGIN_PATH="$PB_FIXTURES"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# sql DB QUERY — one value or rows from a results file.  Tests read a file from two processes
# at once (diff <(sql ...) <(sql ...)); the first to open a WAL file recovers it, and the other
# then waits for it instead of failing with "database is locked".
sql() {
    sqlite3 -batch -noheader -cmd ".timeout 10000" "$1" "$2"
}
