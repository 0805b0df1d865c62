# The topology simulator's results on zoo graphs against those of main before its speed work
# (tests/data/topology_regress/expected.json, made by tests/tools/topology_regress.py generate
# with main's build at 4842896): 24 cases (VGG19, InceptionV3, BERT-small; one GPU, DP with
# AllReduce, with a PS, with shares, duplicate, METIS split, two seeded mixed strategies), every
# `simulate --json` field exact and the --trace file byte for byte, with the compiler switches of
# main (simulator options base_groups, prune, replace_placeholder and sum_parts false).
source "$(dirname "$0")/lib/common.bash"

python3 "$PB_SRC/tests/tools/topology_regress.py" check --bin "$PB_BIN" \
    --data "$PB_TESTDATA/topology_regress" >check.out 2>&1 || {
    cat check.out
    fail "topology results differ from main's"
}
grep -c "^same:" check.out | grep -qx 24 || fail "expected 24 cases: $(cat check.out)"
echo "ok: 24 zoo cases identical to main's"
