#!/usr/bin/env bash
# report_plot.sh — report, export, merge and plot on a results file written by hand
# (tests/data/sample_results.sql; its header derives the expected numbers).
set -euo pipefail
: "${PB_BIN:?set PB_BIN to the placebench binary}" "${PB_TESTDATA:?set PB_TESTDATA to tests/data}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/sample.db"
sqlite3 "$db" <"$PB_TESTDATA/sample_results.sql"

# expect_line FILE LINE: FILE holds LINE as a whole line.
expect_line() {
    grep -qxF -- "$2" "$1" || {
        cat "$1" >&2
        fail "$1 lacks the line: $2"
    }
}
# expect_fail WHAT PATTERN CMD...: CMD exits non-zero and says PATTERN on stderr.
expect_fail() {
    local what=$1 pattern=$2
    shift 2
    if "$@" >"$tmp/out" 2>"$tmp/err"; then
        fail "$what: succeeded"
    fi
    grep -qF -- "$pattern" "$tmp/err" || {
        cat "$tmp/err" >&2
        fail "$what: stderr lacks '$pattern'"
    }
}

# ---- report (markdown): rows and their order, failed runs below the table
"$PB_BIN" report "$db" >"$tmp/report.md"
rows=(
    "| alpha | 2 | k80 | random | - | - | 1 | 0 | 100.0 | 100.0 | 0.00 | 0.250 | 4.0 |"
    "| tiny | 2 | k80 | placeto | placeto-gnn | topo | 2 | 0 | 1000.0 | 800.0 | 18.75 | 12.000 | 60.0 |"
    "| tiny | 2 | k80 | random | - | - | 2 | 1 | 1024.0 | 640.0 | 37.50 | 2.000 | 200.0 |"
    "| tiny | 4 | k80 | placeto | placeto-gnn | reversed-topo | 1 | 2 | - | 500.0 | - | 3.000 | 10.0 |"
    "| r03 | random | g1 | failed | simulator: out of memory |"
    "| r07 | placeto | g1 | crashed | killed by signal 11 |"
    "| r08 | placeto | g1 | timeout | run exceeded 60 s \\| killed |"
)
for r in "${rows[@]}"; do
    expect_line "$tmp/report.md" "$r"
done
# The rows' line numbers, taken in the expected order, must ascend.
for r in "${rows[@]}"; do
    grep -nxF -- "$r" "$tmp/report.md" | cut -d: -f1
done | sort -nc || fail "report rows out of order"

# ---- report --csv --out
"$PB_BIN" report "$db" --csv --out "$tmp/report.csv"
cat >"$tmp/expected.csv" <<'EOF'
dataset,n_devices,cluster,placer,embedding,traversal,runs_ok,runs_failed,mean_initial_us,mean_best_us,mean_improvement_pct,mean_search_wall_s,mean_sim_calls
alpha,2,k80,random,,,1,0,100,100,0,0.25,4
tiny,2,k80,placeto,placeto-gnn,topo,2,0,1000,800,18.75,12,60
tiny,2,k80,random,,,2,1,1024,640,37.5,2,200
tiny,4,k80,placeto,placeto-gnn,reversed-topo,1,2,,500,,3,10
EOF
diff "$tmp/expected.csv" "$tmp/report.csv" || fail "report --csv differs"
[ ! -e "$tmp/report.csv.tmp" ] || fail "report left its temporary file"

# ---- export: runs as CSV, curves as JSON lines
"$PB_BIN" export "$db" --out "$tmp/runs.csv"
[ "$(wc -l <"$tmp/runs.csv")" -eq 10 ] || fail "export: expected a header and 9 runs"
head -1 "$tmp/runs.csv" | grep -q '^run_id,experiment,settings_json,' || fail "export: bad header"
grep -q '^r03,sample,"{""r"":3}",tiny,g1,' "$tmp/runs.csv" || fail "export: CSV quoting of r03"
"$PB_BIN" export "$db" --curves --format jsonl >"$tmp/curves.jsonl"
python3 - "$tmp/curves.jsonl" "$tmp/runs.csv" <<'EOF' || fail "export contents"
import csv, json, sys
pts = [json.loads(l) for l in open(sys.argv[1])]
assert len(pts) == 6, len(pts)
assert [p["run_id"] for p in pts] == ["r04"] * 3 + ["r05"] * 3
assert [p["best_so_far_us"] for p in pts] == [1100, 950, 950, 1000, 750, 700]
runs = list(csv.DictReader(open(sys.argv[2])))
by = {r["run_id"]: r for r in runs}
assert by["r08"]["error"] == "run exceeded 60 s | killed"
assert by["r06"]["initial_us"] == "" and float(by["r06"]["best_us"]) == 500
assert by["r01"]["embedding"] == "" and int(by["r01"]["sim_calls"]) == 100
EOF
"$PB_BIN" export "$db" --format jsonl | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 9 and rows[0]["run_id"] == "r01" and rows[2]["best_us"] is None
' || fail "export --format jsonl"

# ---- merge: two overlapping shards give back the whole file
cp "$db" "$tmp/s1.db"
cp "$db" "$tmp/s2.db"
sqlite3 "$tmp/s1.db" "DELETE FROM curve WHERE run_id IN ('r05','r06','r07','r08','r10');
                      DELETE FROM runs WHERE run_id IN ('r05','r06','r07','r08','r10');"
sqlite3 "$tmp/s2.db" "DELETE FROM curve WHERE run_id IN ('r01','r02','r03');
                      DELETE FROM runs WHERE run_id IN ('r01','r02','r03');"
"$PB_BIN" merge "$tmp/merged.db" "$tmp/s1.db" "$tmp/s2.db" >"$tmp/merge.out"
grep -qF "9 runs (9 added from 2 shard files)" "$tmp/merge.out" || fail "merge: $(cat "$tmp/merge.out")"
"$PB_BIN" merge "$tmp/merged.db" "$tmp/s2.db" >"$tmp/merge.out"
grep -qF "9 runs (0 added from 1 shard file)" "$tmp/merge.out" || fail "merge again: $(cat "$tmp/merge.out")"
"$PB_BIN" report "$tmp/merged.db" --csv | diff "$tmp/expected.csv" - || fail "merged report differs"
[ "$("$PB_BIN" export "$tmp/merged.db" --curves | wc -l)" -eq 7 ] || fail "merged curves"
sed "s/'sample'/'other'/g" "$PB_TESTDATA/sample_results.sql" | sqlite3 "$tmp/other.db"
expect_fail "merge of another experiment" "holds 'other'" \
    "$PB_BIN" merge "$tmp/m2.db" "$tmp/s1.db" "$tmp/other.db"
grep -qF "$tmp/s1.db" "$tmp/err" || fail "merge error does not name the first file"
[ ! -e "$tmp/m2.db" ] || fail "a refused merge created its output"

# ---- bad input: clear errors naming the path
expect_fail "report on a folder" "$tmp: is a directory" "$PB_BIN" report "$tmp"
echo "not a database at all, just some text that is long enough" >"$tmp/notes.txt"
expect_fail "report on a text file" "$tmp/notes.txt: not a placebench results file" \
    "$PB_BIN" report "$tmp/notes.txt"
expect_fail "report on a missing file" "$tmp/none.db" "$PB_BIN" report "$tmp/none.db"
[ ! -e "$tmp/none.db" ] || fail "report created a missing results file"
expect_fail "export --format xml" "expected csv or jsonl" "$PB_BIN" export "$db" --format xml
expect_fail "plot --format gif" "expected png, svg or both" "$PB_BIN" plot "$db" --format gif

# ---- plot: both formats, into --out and into the default folder
"$PB_BIN" plot "$db" --out "$tmp/plots" >"$tmp/plot.out"
for chart in learning_curves learning_curves_relative best_step_time; do
    for f in "$chart.png" "$chart.svg" "$chart.tsv" "$chart.panels.tsv" "$chart.series.tsv"; do
        [ -s "$tmp/plots/$f" ] || fail "plot did not write $f"
        grep -qxF "$tmp/plots/$f" "$tmp/plot.out" || fail "plot did not print $f"
    done
    [ "$(head -c 8 "$tmp/plots/$chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$chart.png is not a PNG"
    grep -q "<svg" "$tmp/plots/$chart.svg" || fail "$chart.svg is not SVG"
done
# The data behind the learning curve (derived in sample_results.sql): episode 0 mean 1050.
grep -qP '^0\t0\t0\t1050\t70\.71' "$tmp/plots/learning_curves.tsv" || fail "learning curve data"
grep -qP '^0\ttiny, 2 devices$' "$tmp/plots/learning_curves.panels.tsv" || fail "panel labels"
# Relative to each run's initial step time, episode 0: (1100/1200 + 1000/800) / 2 = 1.0833...
awk -F'\t' '$1 == 0 && $2 == 0 && $3 == 0 { n++; d = $4 - 13 / 12; bad = d < -1e-12 || d > 1e-12 }
    END { exit bad || n != 1 }' "$tmp/plots/learning_curves_relative.tsv" || fail "relative curve"
grep -qP '^2\trandom$' "$tmp/plots/best_step_time.series.tsv" || fail "series labels"
# random on (tiny, 2 devices): mean best 640, second of the two series in that group.
grep -qP '^1\t2\t-1\t640\t.*\t1\t2$' "$tmp/plots/best_step_time.tsv" || fail "bar data"
(cd "$tmp" && "$PB_BIN" plot sample.db --format png >/dev/null)
[ -s "$tmp/plots/out/sample/best_step_time.png" ] || fail "plot: default folder plots/out/sample"
[ ! -e "$tmp/plots/out/sample/best_step_time.svg" ] || fail "plot --format png wrote an SVG"
mkdir "$tmp/nogp"
expect_fail "plot without gnuplot" "gnuplot not found" \
    env PATH="$tmp/nogp" "$PB_BIN" plot "$db" --out "$tmp/plots2"

echo "report_plot: ok"
