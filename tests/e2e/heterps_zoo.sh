# heterps_zoo.sh — the model zoo's HeterPS chains are what the heterps simulator reads: brute
# force on `dataset gen ctrdnn --layers 8` finds the spec's checked CTRDNN-8 optimum (§11:
# 4.025 USD), as on datasets/heterps/ctrdnn-8.json; profile=devcost times the layers with the
# harness's cost model (a plugin calling pb_op_time_us) and gives another, feasible plan.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

"$PB_BIN" dataset gen ctrdnn --layers 8 --out zoo 2>gen.txt || fail "gen: $(cat gen.txt)"
place() {
    "$PB_BIN" place --graph "$1" --placer brute-force --simulator heterps --cluster heterps \
        --devices 56 --json "${@:2}"
}
zoo=$(place zoo/ctrdnn-8l.json) || fail "brute force on the zoo chain"
ds=$(place "$PB_SRC/datasets/heterps/ctrdnn-8.json") || fail "brute force on the dataset"
dev=$(place zoo/ctrdnn-8l.json --opt simulator.profile=devcost) || fail "profile=devcost"
python3 - "$zoo" "$ds" "$dev" <<'PY' || fail "costs: zoo $zoo / dataset $ds / devcost $dev"
import json, sys
zoo, ds, dev = (json.loads(a) for a in sys.argv[1:])
assert abs(zoo["monetary_cost"] - 4.025) <= 0.0005, zoo
assert zoo["monetary_cost"] == ds["monetary_cost"] and zoo["throughput"] == ds["throughput"]
assert dev["feasible"] is True and dev["throughput"] >= 1.2e6, dev
assert abs(dev["monetary_cost"] - zoo["monetary_cost"]) > 1e-3, dev
PY
if place zoo/ctrdnn-8l.json --opt simulator.profile=roofline >out.txt 2>err.txt; then
    fail "profile=roofline was accepted"
fi
grep -q "profile" err.txt || fail "bad profile: $(cat err.txt)"
echo "ok"
