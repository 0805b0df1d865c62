# gdp_batch.sh — configs/repro/gdp-batch.sh end to end at its smoke profile (2-layer RNNLM,
# 2-layer Transformer-XL, 2-stack WaveNet on 2 GPUs, tiny budgets): every graph gets a step time
# for HP, METIS, HDP, GDP-one, GDP-batch, fine-tune and zero-shot; the tables and the chart's data
# are written; a second run gives the same numbers (seed 1 everywhere); an unknown profile is
# refused.
source "$(dirname "$0")/lib/common.bash"
unset PLACEBENCH_PLUGIN_PATH
script="$PB_SRC/configs/repro/gdp-batch.sh"

PB="$PB_BIN" OPENBLAS_NUM_THREADS=1 bash "$script" smoke a >a.out 2>a.err || {
    cat a.err a/gdp_batch.log >&2
    fail "the smoke profile failed"
}
tsv=a/gdp_batch.tsv
for g in rnnlm-2l transformer-xl-2l wavenet-2s; do
    for m in HP METIS HDP GDP-one GDP-batch finetune zeroshot; do
        t=$(awk -F'\t' -v g="$g" -v m="$m" '$1 == g && $2 == m { print $3 }' "$tsv")
        awk -v t="$t" 'BEGIN { exit !(t + 0 > 0) }' || fail "$g $m: no step time ('$t') in $tsv"
    done
done
[ "$(wc -l <"$tsv")" = 22 ] || fail "not 21 result lines: $(cat "$tsv")"
grep -q "^| transformer-xl-2l |" a/gdp_batch.md || fail "no table row: $(cat a/gdp_batch.md)"
grep -q "Hold-out generalisation (Figure 2)" a.out || fail "the tables were not printed"
[ "$(grep -vc '^#' a/gdp_fig2.tsv)" = 3 ] || fail "the chart's data: $(cat a/gdp_fig2.tsv)"
# The zero-shot placement is the argmax of the loaded parameters: one simulator call after T_ref's.
z=$(awk -F'\t' '$2 == "zeroshot" { print $4 }' "$tsv" | sort -u)
[ "$z" = 3 ] || fail "zero-shot simulator calls: $z"

PB="$PB_BIN" OPENBLAS_NUM_THREADS=1 bash "$script" smoke b >b.out 2>b.err || fail "second run failed"
cmp -s a/gdp_batch.tsv b/gdp_batch.tsv || fail "not deterministic: $(diff a/gdp_batch.tsv b/gdp_batch.tsv)"

if PB="$PB_BIN" bash "$script" nope c >c.out 2>&1; then
    fail "an unknown profile was accepted"
fi
grep -q "profile 'nope' is not quick, smoke or full" c.out || fail "unclear error: $(cat c.out)"
echo "gdp_batch: ok"
