#!/usr/bin/env bash
# tag_gnn_train.sh — TAG's GNN trained through the tag placer (placer.train_out): self-play on a
# model and topology writes a parameter file, the same seed writes the same file byte for byte,
# a second problem (another topology) continues from it, the tag placer loads it for an unseen
# topology, and a network shaped differently from the file is refused with one clear line.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH

"$PB_BIN" dataset gen vgg19 --out zoo 2>/dev/null || fail "dataset gen vgg19"
g=zoo/vgg19.json
small=(--opt placer.hidden=16 --opt placer.edge_hidden=4 --opt placer.heads=2
    --opt placer.layers=2 --opt placer.groups=8)
tag() {
    "$PB_BIN" place --graph $g --simulator topology --json --placer tag "${small[@]}" "$@"
}
field() {
    python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

# Initial data: pure-MCTS self-play on the testbed (3 device groups; (G - i) 2^3 8 visits per
# decision, capped at 40), 4 steps per record.
train1() {
    tag --cluster tag-testbed --devices 16 --opt placer.device_groups=type --seed 5 \
        --opt placer.selfplay_priors=uniform --opt placer.selfplay_limit=40 \
        --opt placer.playouts=10 --opt placer.lr=1e-3 --opt placer.train_out="$1" 2>"$1.log"
}
train1 a.json >/dev/null || fail "training on the testbed: $(cat a.json.log)"
train1 b.json >/dev/null || fail "training again: $(cat b.json.log)"
cmp -s a.json b.json || fail "same seed, different parameter files"
# One record per self-play move, G // 4 moves for G op groups (at least one), 4 steps each; the
# loss on the records falls.
python3 - a.json.log <<'PY' || fail "records, steps or loss: $(cat a.json.log)"
import json, sys
def entry(tag):
    line = next(l for l in open(sys.argv[1]) if tag in l)
    return json.loads(line[line.index("{"):])
train, strategy = entry("tag-train"), entry("tag-strategy")
moves = max(1, len(strategy["groups"]) // 4)
sys.exit(0 if train["records"] == moves and train["steps"] == 4 * moves
         and train["loss_after"] < train["loss_before"] else 1)
PY
echo "ok: self-play training is deterministic"

# The loop (specs/tag.md 8.4): self-play with the current GNN on a random topology, from a.json.
tag --cluster tag-random --devices 8 --seed 6 --opt placer.params=a.json \
    --opt placer.selfplay_limit=20 --opt placer.playouts=5 --opt placer.train_out=c.json \
    >/dev/null 2>c.log || fail "training on a random topology: $(cat c.log)"
cmp -s a.json c.json && fail "a second training round changed nothing"
# One optimizer across the chain (TAG keeps one Adam): a.json carries Adam's steps and moments,
# the second run continues them (its step count adds to the first's); with adam_state=restart a
# run starts a fresh Adam and writes no moments.
tag --cluster tag-random --devices 8 --seed 6 --opt placer.params=a.json \
    --opt placer.selfplay_limit=20 --opt placer.playouts=5 --opt placer.train_out=d.json \
    --opt placer.adam_state=restart >/dev/null 2>d.log || fail "restarted Adam: $(cat d.log)"
python3 - a.json.log c.log d.log a.json d.json <<'PY' || fail "Adam across the chain"
import json, sys
def train(log):
    line = next(l for l in open(log) if "tag-train" in l)
    return json.loads(line[line.index("{"):])
a, c, d = train(sys.argv[1]), train(sys.argv[2]), train(sys.argv[3])
fa, fd = json.load(open(sys.argv[4])), json.load(open(sys.argv[5]))
ok = (not a["adam_continued"] and a["adam_steps"] == a["steps"] == fa["adam"]["steps"]
      and all("adam_m_b64" in t and "adam_v_b64" in t for t in fa["tensors"])
      and c["adam_continued"] and c["adam_steps"] == a["steps"] + c["steps"]
      and not d["adam_continued"] and d["adam_steps"] == d["steps"] and "adam" not in fd
      and not any("adam_m_b64" in t for t in fd["tensors"]))
if not ok:
    print(a, c, d, fa.get("adam"), fd.get("adam"), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
cmp -s c.json d.json && fail "continuing Adam and restarting it gave the same parameters"
echo "ok: chained runs continue one Adam"
# Placing an unseen topology with the trained priors.
r=$(tag --cluster tag-testbed --devices 12 --opt placer.params=c.json --opt placer.playouts=15 \
    --seed 2 2>/dev/null) || fail "tag with trained parameters failed"
[ "$(field "$r" feasible)" = True ] || fail "tag: infeasible result: $r"
python3 -c "import sys; sys.exit(0 if $(field "$r" best_step_time_us) <= \
$(field "$r" initial_step_time_us) else 1)" || fail "tag returned worse than DP-NCCL: $r"
echo "ok: trained parameters load and place an unseen topology"

# A network of another shape than the file: one line naming the tensor and the options.
status=0
"$PB_BIN" place --graph $g --simulator topology --placer tag --cluster tag-testbed --devices 16 \
    --opt placer.params=c.json --opt placer.hidden=8 >out.txt 2>err.txt || status=$?
[ "$status" -eq 1 ] || fail "shape mismatch: exit status $status"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "shape mismatch: stderr is not one line: $(cat err.txt)"
grep -q "c.json: tensor 'enc/op/w' is 13x16 in the file, the model expects 13x8" err.txt ||
    fail "shape mismatch message: $(cat err.txt)"
grep -q "hidden, edge_hidden, heads, layers" err.txt || fail "message lacks the options: $(cat err.txt)"
echo "ok: a mismatched network is refused"
