#!/usr/bin/env bash
# torch_import.sh — `placebench dataset import --torch MODEL`: torchvision's resnet101 and the
# BERT-style encoder traced (forward, backward, SGD update) into validated node-link graphs.
# Needs torch, torchvision and functorch (Debian's python3-torch, python3-torchvision; .ci/setup).
source "$(dirname "$0")/lib/common.bash"

for py in "${PLACEBENCH_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] && "$py" -c "import torch, torchvision, functorch" 2>/dev/null && break
    py=""
done
[ -n "$py" ] || fail "no python3 with torch, torchvision and functorch (run .ci/setup)"
export PLACEBENCH_PYTHON=$py

"$PB_BIN" dataset import --torch resnet101 --batch 1 --out resnet101.json 2>err.txt ||
    fail "import resnet101: $(cat err.txt)"
"$PB_BIN" dataset import --torch bert --batch 1 --out bert.json 2>>err.txt ||
    fail "import bert: $(cat err.txt)"

python3 - resnet101.json bert.json <<'PY' || fail "traced graphs"
import collections, json, sys
r = json.load(open(sys.argv[1]))
kinds = collections.Counter(n["type"] for n in r["nodes"])
# torchvision's resnet101 has 104 convolutions and 44,549,160 parameters (its model card).
assert kinds["convolution"] == 104 and kinds["convolution_backward"] == 104, kinds
params = sum(n.get("mem", 0) for n in r["nodes"] if n["type"] == "Parameter")
assert params == 4 * 44549160, params
assert all(n["flops"] > 0 for n in r["nodes"] if n["type"] == "convolution")
b = json.load(open(sys.argv[2]))
kinds = collections.Counter(n["type"] for n in b["nodes"])
assert kinds["embedding_dense_backward"] >= 3 and kinds["native_layer_norm_backward"] >= 9, kinds
PY
"$PB_BIN" dataset stats resnet101.json >stats.txt || fail "stats of the imported graph"
grep -Eq "^resnet101.json +1 " stats.txt || fail "stats: $(cat stats.txt)"

if "$PB_BIN" dataset import --torch gpt5 --out x.json 2>err.txt; then fail "gpt5 imported"; fi
grep -q "unknown model 'gpt5'" err.txt || fail "unknown model: $(cat err.txt)"
[ ! -e x.json ] || fail "a failed import left x.json"
echo "ok"
