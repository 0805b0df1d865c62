#!/usr/bin/env bash
# tag-tables78.sh — TAG's Tables 7 and 8 (specs/tag.md §11) end to end: trains the GNN with
# configs/repro/tag-train.sh on every model of the profile and once per hold-out model (skipping
# parameter files that exist), then runs configs/repro/tag.lua's table7 and table8 profiles and
# prints `report --tables tag` of both.  Deterministic: the training seeds are tag-train.sh's, the
# topologies come from tag.lua's seed.
#
#   configs/repro/tag-tables78.sh quick|full        (PB=path/to/placebench, JOBS=2)
#
# quick: VGG19 and InceptionV3, tag-train.sh's quick profile (3 trainings), 4 random topologies,
# at most 200 playouts; full: tag-train.sh's full profile 5 times (about 20 h each on this
# machine, an extrapolation: REPRODUCE.md), 20 topologies per model, 200 / 2000 playouts.
set -euo pipefail
PB=${PB:-placebench}
profile=${1:-quick}
jobs=${JOBS:-2}
here=$(cd "$(dirname "$0")" && pwd)
case $profile in
quick) suffix=-quick holdouts="vgg19 inceptionv3" ;;
full) suffix="" holdouts="inceptionv3 resnet101 vgg19 bert-small" ;;
*)
    echo "tag-tables78.sh: profile '$profile' is not quick or full" >&2
    exit 2
    ;;
esac
mkdir -p results datasets/zoo
for m in inceptionv3 resnet101 vgg19 transformer bert-small; do
    if [ "$profile" = full ] || [[ " $holdouts " == *" $m "* ]]; then
        [ -f "datasets/zoo/$m.json" ] || "$PB" dataset gen "$m" --out datasets/zoo 2>/dev/null
    fi
done
train() { # OUT [HOLDOUT]
    [ -f "$1" ] && return 0
    HOLDOUT=${2:-} PB=$PB WORK=results/tag-train$suffix${2:+-without-$2} \
        "$here/tag-train.sh" "$profile" "$1"
}
train "results/tag-gnn$suffix.params"
for m in $holdouts; do
    train "results/tag-gnn$suffix-without-$m.params" "$m"
done
for t in table7 table8; do
    name=$t$suffix
    "$PB" run "$here/tag.lua" --profile "$name" -j "$jobs"
    "$PB" report "results/tag-$name.db" --tables tag
done
