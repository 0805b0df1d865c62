#!/usr/bin/env bash
# dataset_balance.sh — `placebench dataset stats --balance` on a five-op training step whose
# compute/transfer figures and crossing shares are derived by hand, with and without the update
# placed with its variable (placed_with); the family options reach `dataset gen`.
source "$(dirname "$0")/lib/common.bash"

# var -> read -> mm -> grad -> apply, read -> grad, var -> apply; groups A {var, read}, B {mm},
# C {grad, apply}.  Transfers crossing a group boundary, one per (producer, port, consuming
# group): read -> B 400 and read -> C 400 (reads of a variable), mm -> C 100, var -> C 400 (a
# variable into its update): 1300 bytes, 30.8 % updates, 61.5 % reads.  Compute: 35 us over 5
# ops = 7.00 us; with delta1 5.7 after each of the 3 costed ops 52.1 / 5 = 10.42 us; 2 of 5 ops
# cost 0 (40.0 %).  With apply placed with var, var -> apply stays on one device and grad -> A
# (400) crosses instead: 0.0 % updates, 61.5 % reads.
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
# set graphs comp-us busy-us xfer-us ratio free-% cross-MB upd-% read-%
line() { awk -v s="$1" '$1 == s {print $3, $4, $7, $9, $10}' balance.txt; }
[ "$(line apart.json)" = "7.00 10.42 40.0 30.8 61.5" ] || fail "apart: $(cat balance.txt)"
[ "$(line together.json)" = "7.00 10.42 40.0 0.0 61.5" ] || fail "together: $(cat balance.txt)"

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
if "$PB_BIN" dataset stats --balance vgg19 2>err.txt; then fail "--balance vgg19"; fi
grep -q "not for zoo models" err.txt || fail "balance zoo: $(cat err.txt)"
echo "ok"
