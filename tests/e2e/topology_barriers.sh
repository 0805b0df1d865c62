# The topology simulator's control barriers (option control_barriers, default true: a task's
# control waits on several tasks share one counter) give exactly the results of one dependency
# per pair on zoo graphs with TAG's compiler switches (the defaults, which tests/e2e/
# topology_regress.sh does not cover): InceptionV3 (about 830k control waits under DP on 16 GPUs)
# and BERT-small, DP with AllReduce and with a PS; every `simulate --json` field and the --trace
# file byte for byte.
source "$(dirname "$0")/lib/common.bash"

dp_strategies inceptionv3 bert-small
for model in inceptionv3 bert-small; do
    for option in allreduce ps; do
        for barriers in true false; do
            "$PB_BIN" simulate --graph "zoo/$model.json" --strategy dp-$option.json \
                --cluster tag-testbed --devices 16 --json --trace "$barriers.trace" \
                --opt simulator.control_barriers=$barriers >"$barriers.json" ||
                fail "$model $option control_barriers=$barriers: $(cat "$barriers.json")"
        done
        cmp -s true.json false.json || fail "$model $option: --json differs: $(cat true.json false.json)"
        cmp -s true.trace false.trace || fail "$model $option: the traces differ"
        grep -q '"step_time_us"' true.json || fail "$model $option: no step time: $(cat true.json)"
        echo "ok: $model DP $option: the same with and without control barriers"
    done
done
