# gdp_quick.sh — the quick profile of configs/repro/gdp.lua without GDP-one (quick-baselines:
# HP, METIS and HDP on 2-layer RNNLM and GNMT at 2 and 4 GPUs) end to end: every run stored ok,
# a stored run equal to `place --json`, HDP deterministic for a seed, Table 1 in the report; the
# full config names `gdp` and stops with a clear error while that plugin is not built; a model
# without an expert placement is refused by name.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
command -v sqlite3 >/dev/null || fail "the sqlite3 command-line tool is needed (package sqlite3)"

mkdir -p datasets/zoo
"$PB_BIN" dataset gen rnnlm --layers 2 --out datasets/zoo 2>/dev/null
"$PB_BIN" dataset gen gnmt --layers 2 --out datasets/zoo 2>/dev/null
cfg="$PB_SRC/configs/repro/gdp.lua"

"$PB_BIN" run "$cfg" --profile quick-baselines -j 2 >run.out 2>&1 || {
    cat run.out >&2
    fail "the quick-baselines profile failed"
}
db=results/gdp-quick-baselines.db
[ "$(sql "$db" "SELECT count(*) FROM runs WHERE status = 0")" = 12 ] ||
    fail "not 12 ok runs: $(sql "$db" "SELECT placer, graph, n_devices, error FROM runs")"
[ "$(sql "$db" "SELECT count(*) FROM curve c JOIN runs r USING (run_id) WHERE r.placer = 'hdp'")" -ge 16 ] ||
    fail "HDP's runs stored no search curve"

# The stored expert run of 2-layer GNMT on 2 GPUs is `place --json`'s.
want=$("$PB_BIN" place --graph datasets/zoo/gnmt-2l.json --placer expert --simulator topology \
    --cluster gdp-p100 --devices 3 --json | python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["best_step_time_us"]))')
got=$(sql "$db" "SELECT best_us FROM runs WHERE placer = 'expert' AND n_devices = 3 AND graph LIKE 'gnmt%'")
python3 -c "import sys; sys.exit(0 if abs($got - $want) <= 1e-9 * $want else 1)" ||
    fail "stored expert run $got differs from place --json $want"

# HDP: the same seed gives the same search.
hdp() {
    "$PB_BIN" place --graph datasets/zoo/rnnlm-2l.json --placer hdp --simulator topology \
        --cluster gdp-p100 --devices 3 --episodes 6 --seed 4 --json --out "$1" 2>/dev/null |
        sed 's/"wall_s": [^,]*,//'
}
[ "$(hdp a.json)" = "$(hdp b.json)" ] && cmp -s a.json b.json || fail "hdp with one seed gave two runs"

"$PB_BIN" report "$db" >report.md
grep -qF "## GDP: run time per model and method (GDP paper, Table 1)" report.md ||
    fail "report has no Table 1: $(cat report.md)"
grep -q "^| rnnlm-2l | 2 | - | 0\.[0-9]* | " report.md || fail "no 2-layer RNNLM row: $(cat report.md)"

# The config names the gdp placer: without its plugin, check stops and says so.
if [ ! -e "$PB_BUILD/plugins/placer-gdp.so" ]; then
    if "$PB_BIN" check "$cfg" --profile quick >check.out 2>&1; then
        fail "check passed without the gdp plugin"
    fi
    grep -q "unknown placer 'gdp'" check.out || fail "unclear error: $(cat check.out)"
fi

# A model without an expert placement: refused, with the model named.
if "$PB_BIN" place --graph "$PB_SRC/datasets/heterps/nce.json" --placer expert \
    --simulator topology --cluster gdp-p100 --devices 3 >x.out 2>&1; then
    fail "expert placed a model it has no placement for"
fi
grep -q "no human-expert placement for graph" x.out || fail "unclear error: $(cat x.out)"
echo "gdp_quick: ok"
