#!/usr/bin/env bash
# dataset_zoo.sh — `placebench dataset gen|stats|list MODEL`: zoo graphs written as node-link
# JSON with the compiler's annotations, read back, listed, and one-line errors for bad options.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" dataset gen ctrdnn --layers 8 --out zoo 2>gen.txt || fail "gen ctrdnn: $(cat gen.txt)"
"$PB_BIN" dataset gen vgg19 --out zoo 2>>gen.txt || fail "gen vgg19: $(cat gen.txt)"
[ -f zoo/ctrdnn-8l.json ] && [ -f zoo/vgg19.json ] || fail "missing files: $(ls zoo)"
# --layers counts stacks for wavenet and normal cells for amoebanet, and the names say so.
"$PB_BIN" dataset gen wavenet --layers 2 --out zoo 2>>gen.txt || fail "gen wavenet: $(cat gen.txt)"
"$PB_BIN" dataset gen amoebanet --layers 3 --out zoo 2>>gen.txt || fail "gen amoebanet: $(cat gen.txt)"
[ -f zoo/wavenet-2s.json ] && [ -f zoo/amoebanet-3c.json ] || fail "missing files: $(ls zoo)"

python3 - zoo/vgg19.json zoo/ctrdnn-8l.json <<'PY' || fail "annotations"
import collections, json, sys
vgg = json.load(open(sys.argv[1]))
roles = collections.Counter(n.get("role") for n in vgg["nodes"])
# VGG19: 16 convs and 3 fc convs, a weight and a bias each, one Adam update per variable.
assert roles["apply"] == 38 and roles["gradient"] == 38, roles
assert all(n.get("split") in ("batch", "sum", "none") for n in vgg["nodes"])
by_id = {n["id"]: n for n in vgg["nodes"]}
apply = by_id["Adam/update_vgg_19/conv1/conv1_1/weights/ApplyAdam"]
assert apply["colocation"] == by_id["vgg_19/conv1/conv1_1/weights"]["colocation"]
chain = json.load(open(sys.argv[2]))
assert [n["type"].split()[0] for n in chain["nodes"]] == ["EMB", "POOL", "CONCAT", "FC", "FC", "FC", "FC", "LOSS"]
assert len(chain["links"]) == 7
PY

# A written graph reads back like any dataset.
"$PB_BIN" dataset stats zoo/vgg19.json >back.txt || fail "stats of the written graph"
grep -Eq "^vgg19.json +1 " back.txt || fail "read back: $(cat back.txt)"

"$PB_BIN" dataset stats gnmt --layers 4 >gnmt.txt || fail "stats gnmt"
grep -Eq "^gnmt-4l +64 +[0-9]+ +46600 " gnmt.txt || fail "gnmt-4l row: $(cat gnmt.txt)"
"$PB_BIN" dataset list >list.txt
for m in vgg19 resnet101 inceptionv3 bert-small bert-large rnnlm gnmt matchnet ctrdnn 2emb nce; do
    grep -Eq "^$m " list.txt || fail "dataset list lacks $m"
done

expect_error() { # expect_error PATTERN ARGS...: fails unless the command fails with PATTERN
    local pattern=$1
    shift
    if "$PB_BIN" "$@" >out.txt 2>err.txt; then fail "$* succeeded"; fi
    grep -q "$pattern" err.txt || fail "$*: $(cat err.txt)"
}
expect_error "unknown family or model 'gpt5'" dataset gen gpt5 --out zoo
expect_error "has no --layers" dataset gen nce --layers 3 --out zoo
expect_error "not in 7..64" dataset gen ctrdnn --layers 3 --out zoo
expect_error "are for zoo models" dataset gen cifar10 --batch 4 --out zoo
expect_error "are for families" dataset gen vgg19 --count 2 --out zoo
# Model options: a non-default value names the file; bad ones are one-line errors.
"$PB_BIN" dataset gen transformer-xl --layers 1 --opt segments=2 --opt mask=0 --out zoo \
    2>>gen.txt || fail "gen transformer-xl --opt: $(cat gen.txt)"
[ -f "zoo/transformer-xl-1l+segments=2+mask=0.json" ] || fail "option file name: $(ls zoo)"
"$PB_BIN" dataset stats transformer-xl --layers 1 --opt segments=2 >txl.txt || fail "stats --opt"
grep -Eq "^transformer-xl-1l\+segments=2 " txl.txt || fail "stats --opt row: $(cat txl.txt)"
grep -q -- "--opt segments=4 (1..16)" list.txt || fail "dataset list lacks the options"
expect_error "unknown option 'segmentz' (segments=4" dataset gen transformer-xl --opt segmentz=3 --out zoo
expect_error "option mask needs an integer in 0..1 (got '2')" dataset gen transformer-xl --opt mask=2 --out zoo
expect_error "vgg19: unknown option 'ema' (the model has no options)" dataset gen vgg19 --opt ema=1 --out zoo
expect_error "are for zoo models" dataset gen ptb --opt steps=3 --out zoo
mkdir -p elsewhere && cd elsewhere # here 'zoo' names the folder written above
expect_error "applies to one model, not to 'zoo'" dataset stats zoo --opt ema=0
cd ..
echo "ok"
