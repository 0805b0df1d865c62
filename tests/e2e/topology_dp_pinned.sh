# The topology simulator on the six TAG models of the zoo (dataset version 2, the plugin's
# defaults): DP with AllReduce and with a PS on all 16 GPUs of the testbed, `simulate --json` and
# the --trace file byte for byte (their SHA-256) against main's build at 1acb431, before the
# heap walk and task-record changes of issue 15 (README "The topology simulator's heap").
# tests/data/topology_dp_pinned/expected.sha256 was made with that build:
#   git archive 1acb431 | tar -x -C /tmp/base && cmake -S /tmp/base -B /tmp/base/build \
#       -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/base/build -j2
#   PB_PRINT=1 PB_BIN=/tmp/base/build/placebench PB_TESTDATA=tests/data \
#       PB_FIXTURES=/tmp/base/build/fixtures bash tests/e2e/topology_dp_pinned.sh \
#       >tests/data/topology_dp_pinned/expected.sha256
source "$(dirname "$0")/lib/common.bash"

models="vgg19 resnet101 inceptionv3 transformer bert-small bert-large"
dp_strategies $models
for model in $models; do
    for option in allreduce ps; do
        "$PB_BIN" simulate --graph "zoo/$model.json" --strategy dp-$option.json \
            --cluster tag-testbed --devices 16 --json --trace out.trace >out.json ||
            fail "$model $option: $(cat out.json)"
        grep -q '"step_time_us"' out.json || fail "$model $option: no step time: $(cat out.json)"
        echo "$model $option $(sha256sum <out.json | cut -c1-64) $(sha256sum <out.trace | cut -c1-64)"
        rm -f out.json out.trace
    done
done >got.sha256
if [ "${PB_PRINT:-0}" = 1 ]; then
    cat got.sha256
    exit 0
fi
diff "$PB_TESTDATA/topology_dp_pinned/expected.sha256" got.sha256 >diff.out ||
    fail "results differ from main's (model option json-sha256 trace-sha256): $(cat diff.out)"
echo "ok: DP with AllReduce and with a PS on six zoo models, --json and --trace as main's"
