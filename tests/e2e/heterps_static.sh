# Fig. 4's static provisioning baselines through the heterps simulator's `provision` option:
# the optimal CTRDNN-16 plan (brute force) costed by PROVISION, StaRatio and StaPSRatio with
# `placebench simulate` keeps the spec's checked ratios (§3.5 [V]: 9.435 USD, 2.54x, 1.54x); a
# searcher plans under a static rule; a config sweeps the rules and `report` gives the Fig. 4
# table; an unknown rule is a clear error.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

g="$PB_SRC/datasets/heterps/ctrdnn-16.json"
common=(--graph "$g" --simulator heterps --cluster heterps --devices 56 --json)
"$PB_BIN" place "${common[@]}" --placer brute-force --out bf.json > /dev/null
cost_of() {
    "$PB_BIN" simulate "${common[@]}" --placement bf.json --opt simulator.provision="$1" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["feasible"], d; print(d["monetary_cost"])'
}
ours=$(cost_of heterps)
sta=$(cost_of sta-ratio)
ps=$(cost_of sta-ps-ratio)
python3 - "$ours" "$sta" "$ps" <<'PY' || fail "static provisioning of the optimum: ours $ours, StaRatio $sta, StaPSRatio $ps"
import sys
ours, sta, ps = map(float, sys.argv[1:])
assert abs(ours - 9.435) <= 0.0005, ours
assert abs(sta / ours - 2.54) <= 0.005, sta / ours
assert abs(ps / ours - 1.54) <= 0.005, ps / ours
PY
# Brute force under StaRatio plans for that rule: never dearer than the fixed optimum's StaRatio.
best=$("$PB_BIN" place "${common[@]}" --placer brute-force --opt simulator.provision=sta-ratio |
    python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["feasible"], d; print(d["monetary_cost"])')
python3 -c "import sys; sys.exit(0 if $best <= $sta + 1e-9 else 1)" ||
    fail "brute force under StaRatio found $best USD, above the fixed plan's $sta"
# An unknown rule.
if "$PB_BIN" simulate "${common[@]}" --placement bf.json --opt simulator.provision=fixed \
    > out.txt 2> err.txt; then
    fail "provision=fixed was accepted: $(head -c 300 out.txt)"
fi
grep -q "provision" err.txt && grep -q "sta-ps-ratio" err.txt || fail "unclear error: $(cat err.txt)"
# A sweep over rules and limits, and report's Fig. 4 table (the RL scheduler, 3 rounds).
cat > fig4.lua <<LUA
local sims = {}
for _, scale in ipairs({ 1, 2 }) do
  for _, rule in ipairs({ "heterps", "sta-ps-ratio", "sta-ratio" }) do
    sims[#sims + 1] = { "heterps", tl_scale = scale, provision = rule }
  end
end
return experiment {
  name = "fig4", datasets = "$PB_SRC/datasets/heterps/ctrdnn-8.json", devices = 2,
  cluster = "heterps-types", simulator = sims, placer = { { "heterps", rounds = 3, pretrain = 2 } },
  repeats = 1, seed = 1, results = "fig4.db",
}
LUA
"$PB_BIN" run fig4.lua -j 2 --quiet || fail "the Fig. 4 sweep failed"
[ "$(sql fig4.db "SELECT count(*) FROM runs WHERE status = 0")" = 6 ] || fail "not 6 ok runs"
"$PB_BIN" report fig4.db --tables heterps > report.md
grep -q "^### Fig. 4: provisioning against StaPSRatio and StaRatio" report.md ||
    fail "no Fig. 4 table: $(cat report.md)"
[ "$(grep -c '^| ctrdnn-8 | [12] | [0-9.]* | [0-9.]* (' report.md)" = 2 ] ||
    fail "Fig. 4 lacks a line per limit: $(cat report.md)"
