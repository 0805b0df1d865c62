#!/usr/bin/env bash
# heterps_report.sh — the HeterPS tables of `placebench report` and the HeterPS charts of
# `placebench plot` on a results file written by hand (tests/data/heterps_results.sql; its header
# derives the expected numbers), and on the same file in schema 1 (no costs stored).
set -euo pipefail
: "${PB_BIN:?set PB_BIN to the placebench binary}" "${PB_TESTDATA:?set PB_TESTDATA to tests/data}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/h.db"
sqlite3 "$db" <"$PB_TESTDATA/heterps_results.sql"

# expect_line FILE LINE: FILE holds LINE as a whole line.
expect_line() {
    grep -qxF -- "$2" "$1" || {
        cat "$1" >&2
        fail "$1 lacks the line: $2"
    }
}

# ---- report: cost, throughput, scheduling time and Table 2 beside the paper's figures
"$PB_BIN" report "$db" >"$tmp/report.md"
for line in \
    "## HeterPS: cost, throughput and scheduling time (HeterPS paper, Tables 2-3, Figs. 4-10)" \
    "| method | ctrdnn-16 | ctrdnn-8 | paper (Figs. 8-10: largest gap, 4 models) |" \
    "| heterps | 9.5 (+0.0 %) [9-10] | 4 (+0.0 %) | 0 % |" \
    "| greedy | 14.25 (+50.0 %) | 5 (+25.0 %) | <= 29.3 % |" \
    "| all-cpu | failed (1 run) | - | - |" \
    "| brute-force | 9 (-5.3 %) | 4 (+0.0 %) | - |" \
    "| heterps | 1.2e+06 (2/2 feasible) | 1.2e+06 (2/2 feasible) | meets TL |" \
    "| all-cpu | failed (1 run) | - | below TL on ctrdnn-16 |" \
    "| heterps | 1 | 2.5 | 89 s on matchnet |" \
    "| greedy | 0.002 | 0.001 | 0.02 s |" \
    "| brute-force | - | 3.5 | - |" \
    "| 8 | 0.0001 / 0.068 | 0.02 / 11.37 | 2.5 / 15.9-19.1 | yes (4; paper: yes) |" \
    "| 16 | 0.03 / 11.74 | - / 1.25402e+06 (est.) | 1 / 15.9-19.1 | no: 9-10 vs 9 (paper: yes) |"; do
    expect_line "$tmp/report.md" "$line"
done
# The placeto run is not a HeterPS run: no column for its graph.
if grep -q '| g |' "$tmp/report.md"; then
    fail "the placeto run's graph appears in the HeterPS tables"
fi

# ---- CSV: one row per cell, full precision
"$PB_BIN" report "$db" --tables heterps --csv >"$tmp/report.csv"
expect_line "$tmp/report.csv" \
    "ctrdnn-16,16,2,heterps,2,2,2,2,9.5,9,10,1200000,1,0,0,89,89"
expect_line "$tmp/report.csv" \
    "ctrdnn-16,16,2,all-cpu,1,0,0,0,,,,,,,,,0.002"
expect_line "$tmp/report.csv" \
    "ctrdnn-8,8,2,greedy,1,1,1,1,5,5,5,1250000,0.001,,29.300000000000001,0.02,0.02"

# ---- plot: the bars' and the times' data, and the images
if command -v gnuplot >/dev/null; then
    "$PB_BIN" plot "$db" --out "$tmp/plots" --format png >"$tmp/plot.out" 2>"$tmp/plot.err" || {
        cat "$tmp/plot.err" >&2
        fail "plot failed"
    }
    for f in heterps_bars.png heterps_sched_time.png; do
        [ -s "$tmp/plots/$f" ] || fail "plot wrote no $f"
    done
    bars="$tmp/plots/heterps_bars.tsv"
    expect_line "$bars" "$(printf '0\t0\theterps\t0\t3\t9.5\t1200000\t0')"
    expect_line "$bars" "$(printf '0\t0\tbrute-force\t2\t3\t9\t1100000\t3')"
    expect_line "$bars" "$(printf '2\t2\tbrute-force\t0\t1\t3.5\t1300000\t3')"
    expect_line "$tmp/plots/heterps_bars.groups.tsv" "$(printf '2\t2\tctrdnn-8, T = 4')"
    times="$tmp/plots/heterps_sched_time.tsv"
    expect_line "$times" "$(printf '0\t8\t2.5\tctrdnn-8')"
    expect_line "$times" "$(printf '0\t16\t1\tctrdnn-16')"
    expect_line "$tmp/plots/heterps_sched_time.series.tsv" \
        "$(printf '3\tbrute-force, T = 4\t3\t1')"
fi

# ---- Fig. 4: the runs with static provisioning or another throughput limit, in their own table
for line in \
    "| model | TL x | ours (PROVISION) | StaPSRatio | StaRatio | ours < StaPSRatio < StaRatio |" \
    "| ctrdnn-16 | 0.5 | 10.00 | 12.00 (1.20x, +20.0 %) | 15.00 (1.50x, +50.0 %) | yes |" \
    "| ctrdnn-16 | 1 | 9.50 | 9.00 (0.95x, -5.3 %) | 19.00 (2.00x, +100.0 %) | no |" \
    "| ctrdnn-16 | 2 | - | - | failed (1 run) | - |"; do
    expect_line "$tmp/report.md" "$line"
done
grep -q "^| ctrdnn-8 |" "$tmp/report.md" && fail "Fig. 4 has a line for ctrdnn-8, which has no static run"

# ---- the same runs in a schema 1 file: times are reported, costs are "not stored"
old="$tmp/old.db"
cp "$db" "$old"
sqlite3 "$old" "ALTER TABLE runs DROP COLUMN monetary_cost; ALTER TABLE runs DROP COLUMN
    throughput; ALTER TABLE runs DROP COLUMN feasible; UPDATE meta SET value = '1' WHERE key =
    'schema_version'"
"$PB_BIN" report "$old" --tables heterps >"$tmp/old.md"
expect_line "$tmp/old.md" "| heterps | not stored | not stored | 0 % |"
expect_line "$tmp/old.md" "| heterps | 1 | 2.5 | 89 s on matchnet |"
expect_line "$tmp/old.md" "| 8 | 0.0001 / 0.068 | 0.02 / 11.37 | 2.5 / 15.9-19.1 | - |"
[ "$(sqlite3 "$old" "SELECT value FROM meta WHERE key = 'schema_version'")" = 1 ] ||
    fail "report changed the schema 1 file"
if command -v gnuplot >/dev/null; then
    "$PB_BIN" plot "$old" --out "$tmp/oldplots" --format png >/dev/null 2>"$tmp/old.err" ||
        fail "plot of the schema 1 file failed: $(cat "$tmp/old.err")"
    grep -qF "no run of the heterps simulator finished ok with a stored cost; no heterps_bars" \
        "$tmp/old.err" || fail "plot did not say why there are no bars: $(cat "$tmp/old.err")"
    [ -s "$tmp/oldplots/heterps_sched_time.png" ] || fail "no scheduling-time chart of schema 1"
fi
