#!/usr/bin/env bash
# gdp-batch.sh — GDP's Table 2 / Table 5 (GDP-batch against GDP-one and the baselines) and
# Figure 2 (pre-train on the other graphs of a batch set, then fine-tune or zero-shot on the
# hold-out graph), specs/gdp.md §6.6 and §12.  An experiment config (configs/repro/gdp.lua) runs
# one placer on one graph per run, so batch training, which trains one parameter set on several
# graphs, is driven here by `placebench train` and `placebench place` (modes finetune, zeroshot).
#
#   configs/repro/gdp-batch.sh quick|full [OUT_DIR]     (PB=path/to/placebench)
#
# Writes OUT_DIR/gdp_batch.tsv (one line per graph and method: step time in s, simulator calls)
# and OUT_DIR/gdp_batch.md (Table 2 / Table 5 rows and the Figure 2 bars beside the paper's), and
# OUT_DIR/gdp_fig2.png (plots/gdp_fig2.gp over OUT_DIR/gdp_fig2.tsv: per graph, HP, HDP, GDP-one,
# fine-tune, zero-shot and GDP-batch).  Every run has seed 1 (the same profile gives the same
# numbers).
#
# Profiles (the batch set is the paper's "Batch 2": the graphs at 2 GPUs, `--devices 3` on
# gdp-p100, whose device 0 is the host CPU):
#   quick  2-layer RNNLM, 2-layer Transformer-XL, 2-stack WaveNet; GDP-one 2 PPO iterations of 40
#          rollouts (4 minibatches, 2 epochs), GDP-batch the same per graph (120 rollouts per
#          iteration, split round-robin), fine-tune 50 rollouts (the spec's default), HDP 40 steps.
#   smoke  the quick graphs with 1 iteration of 10 rollouts, HDP 5 steps, fine-tune 10 rollouts:
#          the e2e test's profile (tests/e2e/gdp_batch.sh), a check that everything runs.
#   full   the paper's Batch 2 set (Inception-V3, AmoebaNet, 2-layer RNNLM and GNMT, 2-layer
#          Transformer-XL, 2-stack WaveNet) at the spec's defaults (10 iterations of 400
#          rollouts); hours on this machine, not run here.
set -euo pipefail
PB=${PB:-placebench}
profile=${1:-quick}
out=${2:-results/gdp-batch-$profile}
devices=3
case $profile in
quick)
    gens=("rnnlm --layers 2" "transformer-xl --layers 2" "wavenet --layers 2")
    graphs=(rnnlm-2l transformer-xl-2l wavenet-2s)
    gdp=(--opt placer.iterations=2 --opt placer.rollouts=40 --opt placer.minibatches=4
        --opt placer.epochs=2 --opt placer.early_stop=0)
    hdp_steps=40
    ;;
smoke)
    gens=("rnnlm --layers 2" "transformer-xl --layers 2" "wavenet --layers 2")
    graphs=(rnnlm-2l transformer-xl-2l wavenet-2s)
    gdp=(--opt placer.iterations=1 --opt placer.rollouts=10 --opt placer.minibatches=2
        --opt placer.epochs=1 --opt placer.early_stop=0)
    ft=(--opt placer.ft_rollouts=10 --opt placer.ft_k=5)
    hdp_steps=5
    ;;
full)
    gens=("inceptionv3-gdp" "amoebanet" "rnnlm --layers 2" "gnmt --layers 2"
        "transformer-xl --layers 2" "wavenet --layers 2")
    graphs=(inceptionv3-gdp amoebanet-12c rnnlm-2l gnmt-2l transformer-xl-2l wavenet-2s)
    gdp=()
    hdp_steps=4000
    ;;
*)
    echo "gdp-batch.sh: profile '$profile' is not quick, smoke or full" >&2
    exit 2
    ;;
esac
ft=(${ft[@]+"${ft[@]}"})
n=${#graphs[@]}
mkdir -p "$out/zoo"
for g in "${gens[@]}"; do
    # shellcheck disable=SC2086
    "$PB" dataset gen $g --out "$out/zoo" >/dev/null 2>&1
done
for g in "${graphs[@]}"; do
    [ -f "$out/zoo/$g.json" ] || {
        echo "gdp-batch.sh: the zoo did not write $out/zoo/$g.json" >&2
        exit 1
    }
done

common=(--simulator topology --cluster gdp-p100 --devices "$devices" --seed 1 --json)
log="$out/gdp_batch.log"
: >"$log"
tsv="$out/gdp_batch.tsv"
printf 'graph\tmethod\tstep_time_s\tsim_calls\n' >"$tsv"

# json_num KEY: the number after "KEY": in stdin (null -> NaN)
json_num() {
    sed -n "s/.*\"$1\": \\([-0-9.eE+]*\\|null\\).*/\\1/p" | head -1 | sed 's/^null$/NaN/'
}
# place_row GRAPH METHOD ARGS...: one `place` run, one TSV line
place_row() {
    local g=$1 m=$2
    shift 2
    local j
    j=$("$PB" place --graph "$out/zoo/$g.json" "${common[@]}" "$@" 2>>"$log")
    local us calls
    us=$(json_num best_step_time_us <<<"$j")
    calls=$(json_num simulator_calls <<<"$j")
    printf '%s\t%s\t%s\t%s\n' "$g" "$m" "$(awk -v u="$us" 'BEGIN { printf "%.6f", u / 1e6 }')" \
        "$calls" >>"$tsv"
}

for g in "${graphs[@]}"; do
    echo "== $g: baselines and GDP-one" >>"$log"
    place_row "$g" HP --placer expert
    place_row "$g" METIS --placer metis
    place_row "$g" HDP --placer hdp --opt placer.steps=$hdp_steps
    place_row "$g" GDP-one --placer gdp ${gdp[@]+"${gdp[@]}"}
done

# GDP-batch on the whole set: `train --json` gives each graph's best sampled placement.  The
# rollouts per iteration are K per graph (split round-robin, spec §6.5).
batch_gdp=(${gdp[@]+"${gdp[@]}"})
if [ "$profile" = quick ]; then
    batch_gdp=(--opt placer.iterations=2 --opt placer.rollouts=$((40 * n))
        --opt placer.minibatches=$((4 * n)) --opt placer.epochs=2 --opt placer.early_stop=0)
elif [ "$profile" = smoke ]; then
    batch_gdp=(--opt placer.iterations=1 --opt placer.rollouts=$((10 * n))
        --opt placer.minibatches=$((2 * n)) --opt placer.epochs=1 --opt placer.early_stop=0)
fi
train_args=()
for g in "${graphs[@]}"; do train_args+=(--graph "$out/zoo/$g.json"); done
echo "== GDP-batch on ${graphs[*]}" >>"$log"
j=$("$PB" train "${train_args[@]}" --placer gdp "${common[@]}" ${batch_gdp[@]+"${batch_gdp[@]}"} \
    --save "$out/batch-all.json" 2>>"$log")
for g in "${graphs[@]}"; do
    entry=$(tr "{" "\n" <<<"$j" | grep -E "\"graph\": \"([^\"]*/)?$g(\\.json)?\"")
    us=$(json_num best_step_time_us <<<"$entry")
    calls=$(json_num simulator_calls <<<"$entry")
    printf '%s\t%s\t%s\t%s\n' "$g" GDP-batch "$(awk -v u="$us" 'BEGIN { printf "%.6f", u / 1e6 }')" \
        "$calls" >>"$tsv"
done

# Figure 2: pre-train on the other graphs, then fine-tune (50 rollouts) and zero-shot (argmax).
for hold in "${graphs[@]}"; do
    train_args=()
    for g in "${graphs[@]}"; do
        [ "$g" = "$hold" ] || train_args+=(--graph "$out/zoo/$g.json")
    done
    echo "== pre-train without $hold" >>"$log"
    "$PB" train "${train_args[@]}" --placer gdp "${common[@]}" ${batch_gdp[@]+"${batch_gdp[@]}"} \
        --save "$out/pre-$hold.json" >/dev/null 2>>"$log"
    place_row "$hold" finetune --placer gdp --opt placer.mode=finetune ${ft[@]+"${ft[@]}"} \
        --opt placer.load="$out/pre-$hold.json"
    place_row "$hold" zeroshot --placer gdp --opt placer.mode=zeroshot \
        --opt placer.load="$out/pre-$hold.json"
done

# The tables, beside the paper's (Table 2: batch over one; Table 5 "Batch 2": batch over the best
# of HP, METIS, HDP and GDP-one; speed-up = T_other / T_batch - 1).
awk -F'\t' -v profile="$profile" '
function paper2(g) { return g ~ /^rnnlm-2l/ ? "0 %" : g ~ /^gnmt-2l/ ? "0 %" : g ~ /^transformer-xl-2l/ ? "7.6 %" : g ~ /^wavenet-2s/ ? "15 %" : g ~ /^inception/ ? "0 %" : g ~ /^amoebanet/ ? "-5 %" : "-" }
function paper5(g) { return g ~ /^rnnlm-2l/ ? "0 %" : g ~ /^gnmt-2l/ ? "0 %" : g ~ /^transformer-xl-2l/ ? "6.5 %" : g ~ /^wavenet-2s/ ? "4 %" : g ~ /^inception/ ? "0 %" : g ~ /^amoebanet/ ? "-4.5 %" : "-" }
function pct(a, b) { return (a > 0 && b > 0) ? sprintf("%+.1f %%", (a / b - 1) * 100) : "-" }
NR > 1 { t[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
    printf "## GDP-batch against GDP-one (Table 2) and the best baseline (Table 5, Batch 2), profile %s\n\n", profile
    print "Step time (s) of the best sampled placement on 2 GPUs; speed-up = T_other / T_GDP-batch - 1.\n"
    print "| graph | HP | METIS | HDP | GDP-one | GDP-batch | batch over one | paper (Table 2) | batch over best | paper (Table 5) |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
        g = order[i]; best = ""
        split("HP METIS HDP GDP-one", m, " ")
        for (k = 1; k <= 4; k++) if (t[g, m[k]] > 0 && (best == "" || t[g, m[k]] < best)) best = t[g, m[k]]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", g, t[g, "HP"], t[g, "METIS"], t[g, "HDP"], t[g, "GDP-one"], t[g, "GDP-batch"], pct(t[g, "GDP-one"], t[g, "GDP-batch"]), paper2(g), pct(best, t[g, "GDP-batch"]), paper5(g)
    }
    print "\n## Hold-out generalisation (Figure 2): pre-trained on the other graphs of the set\n"
    print "| graph | HP | HDP | GDP-one | fine-tune | zero-shot | fine-tune over HP / HDP | zero-shot over HP / HDP |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
        g = order[i]
        printf "| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s |\n", g, t[g, "HP"], t[g, "HDP"], t[g, "GDP-one"], t[g, "finetune"], t[g, "zeroshot"], pct(t[g, "HP"], t[g, "finetune"]), pct(t[g, "HDP"], t[g, "finetune"]), pct(t[g, "HP"], t[g, "zeroshot"]), pct(t[g, "HDP"], t[g, "zeroshot"])
    }
    print "\nPaper (Figure 2, no figures printed): fine-tune beats HP and HDP on every set and is slightly worse than GDP-one; zero-shot is slightly worse than fine-tune and still better than HP and HDP."
}' "$tsv" >"$out/gdp_batch.md"
# The chart's data: one line per graph, the step times of the Figure 2 bars and GDP-batch.
awk -F'\t' 'NR > 1 { t[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
    print "# x\tgraph\tHP\tHDP\tGDP-one\tfinetune\tzeroshot\tGDP-batch (step time, s)"
    split("HP HDP GDP-one finetune zeroshot GDP-batch", m, " ")
    for (i = 1; i <= n; i++) {
        printf "%d\t%s", i - 1, order[i]
        for (k = 1; k <= 6; k++) printf "\t%s", ((order[i], m[k]) in t) ? t[order[i], m[k]] : "NaN"
        printf "\n"
    }
}' "$tsv" >"$out/gdp_fig2.tsv"
if command -v gnuplot >/dev/null; then
    gnuplot -e "data='$out/gdp_fig2.tsv'; out='$out/gdp_fig2.png'; term='png'" \
        "$(dirname "$0")/../../plots/gdp_fig2.gp" 2>>"$log" || echo "gdp-batch.sh: no chart (see $log)" >&2
fi
cat "$out/gdp_batch.md"
