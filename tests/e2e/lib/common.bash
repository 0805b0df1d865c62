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

# dp_strategies MODEL... — generates the zoo graphs MODEL (zoo/MODEL.json) and writes the two
# strategies replicating every op on all 16 GPUs of tag-testbed: dp-allreduce.json and
# dp-ps.json.
dp_strategies() {
    local model option
    for model in "$@"; do
        "$PB_BIN" dataset gen "$model" --out zoo >/dev/null || fail "dataset gen $model"
    done
    for option in allreduce ps; do
        cat >dp-$option.json <<JSON
{"device_groups": {"all": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]},
 "default": {"group": "all", "option": "$option"}}
JSON
    done
}
