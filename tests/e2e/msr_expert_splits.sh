# Every MSR dnn-partitioning graph imports, and every human-expert split evaluates on the Placeto
# simulator (one device per accelerator or CPU of the split).
source "$(dirname "$0")/lib/common.bash"
msr="$PB_SRC/datasets/msr-dnn-partitioning"

n=0
for g in "$msr"/LayerGraphs/*.json "$msr"/OperatorGraphs/*.json; do
    "$PB_BIN" dataset import --msr "$g" --out imported.json || fail "import of $g failed"
    n=$((n + 1))
done
[ "$n" = 15 ] || fail "expected 15 MSR graphs, found $n"

splits=0
for e in "$msr"/human-experts/*_expert.json; do
    name=$(basename "$e" _expert.json)
    g="$msr/LayerGraphs/$name.json"
    [ -f "$g" ] || fail "no layer graph for expert split $e"
    "$PB_BIN" dataset import --msr "$g" --out "$name.json" --expert "$e" --placement-out "$name.pl.json" \
        2> "$name.log" || fail "$(cat "$name.log")"
    devices=$(sed -n 's/.*over \([0-9]*\) devices.*/\1/p' "$name.log")
    "$PB_BIN" simulate --graph "$name.json" --placement "$name.pl.json" --devices "$devices" --json \
        > "$name.eval.json" || fail "simulating the expert split of $name failed"
    python3 - "$name.eval.json" "$devices" <<'PY' || fail "bad evaluation of $name"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["step_time_us"] > 0, r
assert len(r["peak_memory_bytes"]) == int(sys.argv[2]), r
PY
    splits=$((splits + 1))
done
[ "$splits" = 6 ] || fail "expected 6 expert splits, evaluated $splits"
echo "ok: 15 graphs imported, 6 expert splits evaluated"
