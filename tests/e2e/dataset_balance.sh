#!/usr/bin/env bash
# dataset_balance.sh — `placebench dataset stats --balance` on a five-op training step whose
# compute/transfer figures and crossing shares are derived by hand, with and without the update
# placed with its variable (placed_with); the family options reach `dataset gen`.
source "$(dirname "$0")/lib/common.bash"

# var -> read -> mm -> grad -> apply, read -> grad, var -> apply; groups A {var, read}, B {mm},
# C {grad, apply}.  Transfers crossing a group boundary, one per (producer, port, consuming
# group): read -> B 400 and read -> C 400 (reads of a variable), mm -> C 100, var -> C 400 (a
# variable into its update): 1300 bytes, 30.8 % updates, 61.5 % reads; of the 4 transfers 1 is
# an update (25.0 %) and 2 are reads (50.0 %).  Compute: 35 us over 5
# ops = 7.00 us; with delta1 5.7 after each of the 3 costed ops 52.1 / 5 = 10.42 us; 2 of 5 ops
# cost 0 (40.0 %).  With apply placed with var, var -> apply stays on one device and grad -> A
# (400) crosses instead: 0.0 % updates, 61.5 % reads; 0.0 % and 50.0 % of the 4 transfers.
graph() {
    cat <<JSON
{"directed": true, "nodes": [
 {"id": "var", "type": "VariableV2", "group": "A", "cost": 0, "out_size": 400},
 {"id": "read", "type": "Identity", "group": "A", "cost": 0, "out_size": 400},
 {"id": "mm", "type": "MatMul", "group": "B", "cost": 10, "out_size": 100},
 {"id": "grad", "type": "MatMul", "group": "C", "cost": 20, "out_size": 400},
 {"id": "apply", "type": "ApplyGradientDescent", "group": "C", "cost": 5 $1}],
 "links": [{"source": "var", "target": "read"}, {"source": "read", "target": "mm"},
  {"source": "mm", "target": "grad"}, {"source": "read", "target": "grad"},
  {"source": "var", "target": "apply"}, {"source": "grad", "target": "apply"}]}
JSON
}
graph "" >apart.json
graph ', "placed_with": "var"' >together.json
"$PB_BIN" dataset stats --balance apart.json together.json >balance.txt || fail "stats --balance"
# set graphs comp-us busy-us xfer-us ratio free-% cross-MB upd-% read-% upd-n% read-n%
line() { awk -v s="$1" '$1 == s {print $3, $4, $7, $9, $10, $11, $12}' balance.txt; }
[ "$(line apart.json)" = "7.00 10.42 40.0 30.8 61.5 25.0 50.0" ] || fail "apart: $(cat balance.txt)"
[ "$(line together.json)" = "7.00 10.42 40.0 0.0 61.5 0.0 50.0" ] ||
    fail "together: $(cat balance.txt)"

# The simulator sees the colocation, for an op-level placement as for a group placement.  All on
# device 0: mm 0-10, grad 15.7-35.7, apply 41.4-46.4, then delta1: 52.1 us.  apply on device 1
# when not colocated: var's 400 bytes cross bus 0 at 0 (busy until 25.05), grad's at 35.7
# (arrive 35.75, bus busy until 60.75), apply 35.75-40.75 on device 1: 60.75 us.  Placed with
# var, apply runs on device 0 whatever the placement says: 52.1 us.
echo '{"var": 0, "read": 0, "mm": 0, "grad": 0, "apply": 1}' >ops.json
echo '{"A": 0, "B": 0, "C": 1}' >groups.json
step() { "$PB_BIN" simulate --graph "$1" --placement "$2" --devices 2 --json |
    python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["step_time_us"])'; }
[ "$(step apart.json ops.json)" = "60.75" ] || fail "apart, apply on 1: $(step apart.json ops.json)"
[ "$(step together.json ops.json)" = "52.10" ] || fail "together, ops: $(step together.json ops.json)"
# by group, C on device 1: grad runs there too, apply follows var on 0
[ "$(step together.json groups.json)" != "$(step apart.json groups.json)" ] ||
    fail "colocation changed nothing for a group placement"

# The options reach the generated files: colocation writes placed_with, ports first zeroes port 1.
"$PB_BIN" dataset gen nmt --count 1 --colocate on --ports first --kernelless free --out on \
    2>gen.txt || fail "gen: $(cat gen.txt)"
grep -q "kernelless=free ports=first colocate=on" gen.txt || fail "options line: $(cat gen.txt)"
"$PB_BIN" dataset gen nmt --count 1 --colocate off --ports all --kernelless charged --out off \
    2>gen.txt || fail "gen: $(cat gen.txt)"
python3 - on/nmt-00.json off/nmt-00.json <<'PY' || fail "generated options"
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
applies = [n for n in on["nodes"] if n.get("type", "").startswith("Apply")]
assert applies and all("placed_with" in n for n in applies)
assert not any("placed_with" in n for n in off["nodes"])
assert all(s == 0 for n in on["nodes"] for s in n["out_sizes"][1:])
assert any(s > 0 for n in off["nodes"] for s in n["out_sizes"][1:])
assert all(n["cost"] == 0 for n in on["nodes"] if n.get("type") in ("VariableV2", "Identity", "NoOp"))
assert all(n["cost"] > 0 for n in off["nodes"] if n.get("type") in ("VariableV2", "Identity"))
PY
if "$PB_BIN" dataset stats --json --balance apart.json 2>err.txt; then fail "--json --balance"; fi
grep -q -- "--json and --balance exclude each other" err.txt || fail "json+balance: $(cat err.txt)"
if "$PB_BIN" dataset stats --balance --colocate on apart.json 2>err.txt; then fail "options on a file"; fi
grep -q "apply to families generated in memory" err.txt || fail "options on a file: $(cat err.txt)"
if "$PB_BIN" dataset stats --balance vgg19 2>err.txt; then fail "--balance vgg19"; fi
grep -q "not for zoo models" err.txt || fail "balance zoo: $(cat err.txt)"
echo "ok"
