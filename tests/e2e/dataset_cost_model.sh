# dataset gen --cost-model: the generated files say which dataset version and cost model made them
# (graph attribute "origin"), results record it (runs.graph_origin), roofline graphs keep the
# version-1 content (checksum) and a bad model name is a clear error.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

"$PB_BIN" dataset gen cifar10 --count 1 --out datasets/cifar10 >/dev/null 2>&1
"$PB_BIN" dataset gen cifar10 --count 1 --cost-model roofline --colocate off --batch 128 --out roof >/dev/null 2>&1
origin() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["graph"]["origin"])' "$1"; }
[ "$(origin datasets/cifar10/cifar10-00.json)" = "placebench dataset 2, cost_model calibrated" ] ||
    fail "default origin: $(origin datasets/cifar10/cifar10-00.json)"
[ "$(origin roof/cifar10-00.json)" = "placebench dataset 2, cost_model roofline" ] ||
    fail "roofline origin: $(origin roof/cifar10-00.json)"
# The roofline graph is version 1's (checksum of main before the calibration, test_cost_model.c).
sum=$("$PB_BIN" dataset stats --json roof/cifar10-00.json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["checksum"])')
[ "$sum" = ab9e1c59199dd753 ] || fail "roofline cifar10/00 has checksum $sum"
# Calibrated kernels are slower than the plain roofline: the single-device step time grows.
single() { "$PB_BIN" place --graph "$1" --placer single-device --devices 2 --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["best_step_time_us"])'; }
"$PB_BIN" dataset gen cifar10 --count 1 --colocate off --batch 128 --out cal >/dev/null 2>&1
python3 -c "import sys; sys.exit(0 if $(single cal/cifar10-00.json) > $(single roof/cifar10-00.json) else 1)" ||
    fail "the calibrated graph is not slower on one device than the roofline one"
# Bad input.
if "$PB_BIN" dataset gen cifar10 --count 1 --cost-model rooflin --out bad 2>err.txt; then
    fail "an unknown cost model was accepted"
fi
grep -q "cost-model 'rooflin' is not one of calibrated, roofline" err.txt || fail "unclear error: $(cat err.txt)"
[ ! -e bad/cifar10-00.json ] || fail "a graph was written despite the error"
# Results record the origin; an experiment's cost_model (default "calibrated") must match the
# generated graphs it runs.
cat >x.lua <<'LUA'
return experiment {
  name = "origin", datasets = "cifar10", devices = 2, cluster = "placeto-k80",
  simulator = "placeto", placer = "single-device", seed = 1, results = "r.db",
}
LUA
cat >y.lua <<'LUA'
return experiment {
  name = "origin_roofline", datasets = "roof/cifar10-00.json", devices = 2,
  cluster = "placeto-k80", simulator = "placeto", placer = "single-device", seed = 1,
  results = "q.db",
  cost_model = "roofline",
}
LUA
"$PB_BIN" run x.lua >run.out 2>&1 || { cat run.out >&2; fail "the calibrated sweep failed"; }
"$PB_BIN" run y.lua >run.out 2>&1 || { cat run.out >&2; fail "the roofline sweep failed"; }
got=$(sqlite3 r.db "SELECT graph_origin FROM runs"; sqlite3 q.db "SELECT graph_origin FROM runs")
[ "$got" = "placebench dataset 2, cost_model calibrated
placebench dataset 2, cost_model roofline" ] || fail "stored origins: $got"
sed '/cost_model = "roofline"/d; s/origin_roofline/mixed/; s/q.db/z.db/' y.lua >z.lua
if "$PB_BIN" run z.lua >run.out 2>&1; then
    fail "a roofline graph ran under the default cost_model"
fi
grep -q 'z.lua:[0-9]*: cost_model "calibrated": graph roof/cifar10-00.json was generated with cost_model roofline' run.out ||
    fail "unclear error: $(cat run.out)"
sed 's/"roofline"/"rooflin"/' y.lua >w.lua
if "$PB_BIN" check w.lua >run.out 2>&1; then
    fail "an unknown cost_model was accepted"
fi
grep -q "w.lua:5: field 'cost_model' must be \"calibrated\" or \"roofline\"" run.out ||
    fail "unclear error: $(cat run.out)"
