#!/usr/bin/env bash
# tag-train.sh — trains TAG's heterogeneous GAT (specs/tag.md §8.4) as a chain of `placebench
# place --placer tag` runs, each doing self-play on one (model, topology) record and training on
# its records (placer.train_out), the next starting from the file the previous one wrote:
#   1. initial data: pure-MCTS self-play (selfplay_priors=uniform) on every record;
#   2. rounds: self-play with the current GNN on 4 records drawn from the list.
# Records: each model on the TAG testbed and on `randoms` seeded tag-random topologies.
# Deterministic: the same profile gives the same parameter file, byte for byte.
#
#   configs/repro/tag-train.sh quick|full [OUT.json]     (PB=path/to/placebench, WORK=folder,
#                                                        DEVICE_GROUPS=type|machine,
#                                                        HOLDOUT=model)
# HOLDOUT leaves one model out of the records (TAG's Table 8: train without it, search on it).
# One Adam optimizer runs through the whole chain (its moments travel in the parameter file).
# Device groups by GPU type (default), as configs/repro/tag.lua searches and as TAG's code merges
# its testbed: at most 3 device groups, 21 actions per op group.
set -euo pipefail
PB=${PB:-placebench}
profile=${1:-quick}
out=${2:-tag-gnn-$profile.json}
work=${WORK:-tag-train-$profile}
device_groups=${DEVICE_GROUPS:-type}
case $profile in
quick) models="vgg19 inceptionv3" randoms=2 limit=40 rounds=1 playouts=5 ;;
full) models="inceptionv3 resnet101 vgg19 bert-small bert-large" randoms=8 limit=800 rounds=20 \
    playouts=50 ;;
*)
    echo "tag-train.sh: profile '$profile' is not quick or full" >&2
    exit 2
    ;;
esac
if [ -n "${HOLDOUT:-}" ]; then
    case " $models " in
    *" $HOLDOUT "*) models=$(echo " $models " | sed "s/ $HOLDOUT / /; s/^ //; s/ $//") ;;
    *)
        echo "tag-train.sh: HOLDOUT '$HOLDOUT' is not one of the $profile profile's models" \
            "($models)" >&2
        exit 2
        ;;
    esac
fi

mkdir -p "$work/zoo"
for m in $models; do
    [ -f "$work/zoo/$m.json" ] || "$PB" dataset gen "$m" --out "$work/zoo" 2>/dev/null
done
records=()
for m in $models; do
    records+=("$m tag-testbed 16 1")
    for r in $(seq 1 "$randoms"); do records+=("$m tag-random 8 $((100 + r))"); done
done

params=""
: >"$work/train.log"
# train MODEL CLUSTER DEVICES SEED PRIORS
train() {
    echo "== $*" >>"$work/train.log"
    "$PB" place --graph "$work/zoo/$1.json" --simulator topology --cluster "$2" --devices "$3" \
        --seed "$4" --placer tag --json --opt placer.selfplay_priors="$5" \
        --opt placer.device_groups="$device_groups" \
        --opt placer.selfplay_limit="$limit" --opt placer.playouts="$playouts" \
        --opt placer.train_out="$work/next.json" ${params:+--opt placer.params="$params"} \
        >/dev/null 2>>"$work/train.log"
    mv "$work/next.json" "$work/current.json"
    params="$work/current.json"
}

start=$(date +%s.%N)
for rec in "${records[@]}"; do
    # shellcheck disable=SC2086 # a record is four words
    train $rec uniform
done
for round in $(seq 1 "$rounds"); do
    for k in $(python3 -c "import random; r = random.Random($round); \
print(*r.sample(range(${#records[@]}), min(4, ${#records[@]})))"); do
        # shellcheck disable=SC2086
        train ${records[$k]} gnn
    done
done
cp "$work/current.json" "$out"
python3 -c "import sys; print('tag-train.sh: %s profile, %d records, %d rounds: %.1f s -> %s' % \
(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[5]) - float(sys.argv[4]), \
sys.argv[6]))" "$profile" "${#records[@]}" "$rounds" "$start" "$(date +%s.%N)" "$out"
