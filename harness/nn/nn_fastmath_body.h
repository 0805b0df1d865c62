/* nn_fastmath_body.h — the fast exp, sigmoid, tanh and LSTM-cell arithmetic of nn_fastmath.c,
 * written once over a vector type V and included once per instruction set, so that every
 * version performs the same IEEE operations in the same order (hence the same bits).
 *
 * The includer defines: FM_ATTR (function attributes), FM_NAME(x) (the version's suffix), V,
 * FM_SET(c), FM_ADD, FM_SUB, FM_MUL, FM_DIV, FM_FMA(a, b, c) = a b + c rounded once, FM_ABS,
 * FM_NEG, FM_MIN(a, b) = a < b ? a : b and FM_MAX(a, b) = a > b ? a : b (b when either is NaN,
 * as MINPS and MAXPS), FM_SEL_GE0(x, a, b) =
 * x >= 0 ? a : b and FM_SEL_LT(x, y, a, b) = x < y ? a : b (ordered compares), FM_COPYSIGN(y,
 * x) = y with x's sign bit ORed in (y >= 0), FM_POW2(t) = 2^(bits(t) - bits(NN_FM_MAGIC)) as a
 * float built from its exponent bits.  It undefines them at its end. */

/* e^x for x in [NN_FM_EXP_LO, NN_FM_EXP_HI] (callers clamp): x = n ln2 + r with n the nearest
 * integer to x log2(e) (rounded by the magic-number addition, ties to even), r reduced in two
 * exact-ish steps (Cody-Waite with FMA), e^r = 1 + r + r^2 P(r), then times 2^n. */
static FM_ATTR V FM_NAME(nn_fm_exp)(V x)
{
    V t = FM_FMA(x, FM_SET(NN_FM_LOG2E), FM_SET(NN_FM_MAGIC));
    V nf = FM_SUB(t, FM_SET(NN_FM_MAGIC));
    V r = FM_FMA(nf, FM_SET(-NN_FM_LN2_HI), x);
    r = FM_FMA(nf, FM_SET(-NN_FM_LN2_LO), r);
    V p = FM_FMA(FM_SET(NN_FM_E6), r, FM_SET(NN_FM_E5));
    p = FM_FMA(p, r, FM_SET(NN_FM_E4));
    p = FM_FMA(p, r, FM_SET(NN_FM_E3));
    p = FM_FMA(p, r, FM_SET(NN_FM_E2));
    p = FM_FMA(p, FM_MUL(r, r), r);
    p = FM_ADD(p, FM_SET(1.0f));
    return FM_MUL(p, FM_POW2(t));
}

/* e^x with x clamped to [NN_FM_EXP_LO, NN_FM_EXP_HI] (NaN gives e^NN_FM_EXP_LO). */
static FM_ATTR V FM_NAME(nn_fm_exp_clamped)(V x)
{
    return FM_NAME(nn_fm_exp)(FM_MAX(FM_MIN(x, FM_SET(NN_FM_EXP_HI)), FM_SET(NN_FM_EXP_LO)));
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below, with e = e^-|x| and |x| clamped to 87
 * (below -87 the result stays at sigmoid(-87) ~ 1.6e-38 instead of going to 0). */
static FM_ATTR V FM_NAME(nn_fm_sigmoid)(V x)
{
    V a = FM_MIN(FM_ABS(x), FM_SET(-NN_FM_EXP_LO));
    V e = FM_NAME(nn_fm_exp)(FM_NEG(a));
    V d = FM_ADD(FM_SET(1.0f), e);
    return FM_DIV(FM_SEL_GE0(x, FM_SET(1.0f), e), d);
}

/* tanh |x|: an odd polynomial a + a u P(u), u = a^2, below NN_FM_TANH_SPLIT, else
 * 1 - 2 / (e^2a + 1) with 2a clamped to NN_FM_EXP_HI; then x's sign. */
static FM_ATTR V FM_NAME(nn_fm_tanh)(V x)
{
    V a = FM_ABS(x);
    V u = FM_MUL(a, a);
    V p = FM_FMA(FM_SET(NN_FM_T4), u, FM_SET(NN_FM_T3));
    p = FM_FMA(p, u, FM_SET(NN_FM_T2));
    p = FM_FMA(p, u, FM_SET(NN_FM_T1));
    p = FM_FMA(p, u, FM_SET(NN_FM_T0));
    V small = FM_FMA(a, FM_MUL(u, p), a);
    V e = FM_NAME(nn_fm_exp)(FM_MIN(FM_ADD(a, a), FM_SET(NN_FM_EXP_HI)));
    V large = FM_SUB(FM_SET(1.0f), FM_DIV(FM_SET(2.0f), FM_ADD(e, FM_SET(1.0f))));
    return FM_COPYSIGN(FM_SEL_LT(a, FM_SET(NN_FM_TANH_SPLIT), small, large), x);
}

/* One LSTM cell entry from its four gate pre-activations and c: the gates, c' = f c + i g (one
 * FMA), tanh(c') and h' = o tanh(c'). */
static FM_ATTR void FM_NAME(nn_fm_lstm)(V zi, V zf, V zg, V zo, V c, V *ig, V *fg, V *gg, V *og,
                                        V *cn, V *tc, V *h)
{
    *ig = FM_NAME(nn_fm_sigmoid)(zi);
    *fg = FM_NAME(nn_fm_sigmoid)(zf);
    *gg = FM_NAME(nn_fm_tanh)(zg);
    *og = FM_NAME(nn_fm_sigmoid)(zo);
    *cn = FM_FMA(*fg, c, FM_MUL(*ig, *gg));
    *tc = FM_NAME(nn_fm_tanh)(*cn);
    *h = FM_MUL(*og, *tc);
}

/* The reverse of nn_fm_lstm for one entry: from dh' and the gradient dc' already gathered,
 * dc' += dh' o (1 - tanh(c')^2), then dz of the four gates and the part of dc that flows back,
 * f dc'.  Products and sums only, each rounded once, in this order. */
static FM_ATTR void FM_NAME(nn_fm_lstm_grad)(V ig, V fg, V gg, V og, V tc, V c, V dh, V *dcn, V *dc,
                                             V *dzi, V *dzf, V *dzg, V *dzo)
{
    V one = FM_SET(1.0f);
    *dcn = FM_ADD(*dcn, FM_MUL(FM_MUL(dh, og), FM_SUB(one, FM_MUL(tc, tc))));
    *dc = FM_MUL(*dcn, fg);
    *dzo = FM_MUL(FM_MUL(FM_MUL(dh, tc), og), FM_SUB(one, og));
    *dzg = FM_MUL(FM_MUL(*dcn, ig), FM_SUB(one, FM_MUL(gg, gg)));
    *dzf = FM_MUL(FM_MUL(FM_MUL(*dcn, c), fg), FM_SUB(one, fg));
    *dzi = FM_MUL(FM_MUL(FM_MUL(*dcn, gg), ig), FM_SUB(one, ig));
}

#undef FM_ATTR
#undef FM_NAME
#undef V
#undef FM_SET
#undef FM_ADD
#undef FM_SUB
#undef FM_MUL
#undef FM_DIV
#undef FM_FMA
#undef FM_ABS
#undef FM_NEG
#undef FM_MIN
#undef FM_MAX
#undef FM_SEL_GE0
#undef FM_SEL_LT
#undef FM_COPYSIGN
#undef FM_POW2
