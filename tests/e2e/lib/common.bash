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

# sql DB QUERY — one value or rows from a results file.
sql() {
    sqlite3 -batch -noheader "$1" "$2"
}
