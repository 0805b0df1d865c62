# gdp_report.sh — GDP's Table 1 in `placebench report` on a results file written by hand
# (tests/data/gdp_results.sql; its header derives the expected numbers): run times, OOM and
# failed cells, speed-ups, search speed-up, GEOMEAN, the paper's GEOMEAN in both conventions
# (specs/gdp.md §12: 15.0 % / 11.2 % from the run times, 16.3 % / 11.2 % of the printed
# percentages), the claims, and the CSV form.
source "$(dirname "$0")/lib/common.bash"
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"
tmp=$WORK
db="$tmp/g.db"
sqlite3 "$db" <"$PB_TESTDATA/gdp_results.sql"

# FILE holds LINE as a whole line.
expect_line() { grep -qxF -- "$2" "$1" || fail "$1 lacks the line: $2 (it holds: $(cat "$1"))"; }

"$PB_BIN" report "$db" >"$tmp/report.md"
for line in \
    "## GDP: run time per model and method (GDP paper, Table 1)" \
    "| rnnlm-2l | 2 | 0.210 | 0.252 | OOM | 0.231 | +20.0 % | +10.0 % | 10x | 0.234 / 0.257 / 0.355 / 0.243 | +9.8 % / +4.0 %, 2.95x |" \
    "| gnmt-2l | 2 | 0.300 | 0.330 | failed (1) | 0.360 | +10.0 % | +20.0 % | 10x | 0.301 / 0.384 / OOM / 0.376 | +27.6 % / +24.9 %, 30x |" \
    "| rnnlm-2l | 4 | - | 0.252 | - | - | - | - | - | - | - |" \
    "| GEOMEAN | | | | | | +14.9 % | +14.9 % | 10x | | +16.0 % / +9.2 %, 15x |" \
    "- GDP-one <= HDP: 2 of 2 rows (paper: 12 of 12)" \
    "- GDP-one <= HP: 2 of 2 rows (paper: 11 of 12, not 8-layer GNMT)" \
    "- METIS OOM: 1 of 1 rows (paper: 9 of 12)" \
    "- calibration (spec §11.3): our HP within 2x of the paper's HP on 2 of 2 rows"; do
    expect_line "$tmp/report.md" "$line"
done
grep -qF "from its run times +15.0 % / +11.2 %; of its printed percentages +16.3 % / +11.2 %" \
    "$tmp/report.md" || fail "the paper's GEOMEAN in both conventions is missing"
# (The GDP-one cell 0.210 above leaves out P1, the gdp run of 1000 us on placeto-k80.)

# Only Table 1, as CSV: one row per (model, GPUs, method) with runs.
"$PB_BIN" report "$db" --tables gdp --csv >"$tmp/t1.csv"
python3 - "$tmp/t1.csv" <<'PY' || fail "the CSV form of Table 1 is wrong: $(cat "$tmp/t1.csv")"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 9, len(rows)
r = {(x["model"], x["gpus"], x["method"]): x for x in rows}
g = r[("rnnlm-2l", "2", "GDP-one")]
assert (g["runs"], g["feasible"]) == ("2", "2") and abs(float(g["run_time_s"]) - 0.21) < 1e-12
assert float(g["reach_1pct_s"]) == 3 and float(g["reach_1pct_sim_calls"]) == 250
assert float(g["paper_run_time_s"]) == 0.234
assert math.isnan(float(r[("rnnlm-2l", "2", "METIS")]["run_time_s"]))
assert r[("gnmt-2l", "2", "METIS")]["ok"] == "0"
PY
# The chart's data: Table 1's rows, ours then the paper's run times (NaN: none, OOM, failed).
if command -v gnuplot >/dev/null; then
    "$PB_BIN" plot "$db" --out "$tmp/plots" --format png >"$tmp/plot.out" 2>&1 ||
        fail "plot failed: $(cat "$tmp/plot.out")"
    [ -s "$tmp/plots/gdp_table1.png" ] || fail "no gdp_table1.png"
    python3 - "$tmp/plots/gdp_table1.tsv" <<'PY' || fail "gdp_table1.tsv is wrong: $(cat "$tmp/plots/gdp_table1.tsv")"
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
assert [r[1] for r in rows] == ["rnnlm-2l, 2 GPUs", "gnmt-2l, 2 GPUs", "rnnlm-2l, 4 GPUs"], rows
v = [[float(x) for x in r[2:]] for r in rows]
assert abs(v[0][0] - 0.21) < 1e-12 and v[0][1] == 0.252 and math.isnan(v[0][2]), v[0]
assert v[0][4:] == [0.234, 0.257, 0.355, 0.243], v[0]
assert math.isnan(v[1][2]) and math.isnan(v[1][6]) and v[1][3] == 0.36, v[1]
assert math.isnan(v[2][0]) and v[2][1] == 0.252 and all(math.isnan(x) for x in v[2][4:]), v[2]
PY
fi

# Asked for Table 1 without runs on the GDP cluster: an error naming the file.
sqlite3 "$db" "UPDATE runs SET cluster = 'other'"
if "$PB_BIN" report "$db" --tables gdp >"$tmp/none.md" 2>"$tmp/none.err"; then
    fail "report --tables gdp succeeded without GDP runs"
fi
grep -q "no run used the gdp-p100 cluster" "$tmp/none.err" || fail "unclear error: $(cat "$tmp/none.err")"
echo "gdp_report: ok"
