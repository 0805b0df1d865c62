/* nn_tape.c — the autodiff tape: arenas, tensors, leaves and views, sticky errors, backward. */
#include "nn_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A first chunk of 256 KiB holds the forward pass of a mid-sized Placeto graph without growing. */
#define NN_MIN_CHUNK ((size_t)256 * 1024)

static int tape_arena_add_chunk(nn_arena *a, size_t size)
{
    if (a->n_chunks == a->cap_chunks) {
        int cap = a->cap_chunks ? 2 * a->cap_chunks : 4;
        nn_chunk *c = realloc(a->chunks, (size_t)cap * sizeof *c);
        if (!c)
            return PB_ERR;
        a->chunks = c;
        a->cap_chunks = cap;
    }
    unsigned char *base = aligned_alloc(NN_ALIGN, size);
    if (!base)
        return PB_ERR;
    a->chunks[a->n_chunks++] = (nn_chunk){.base = base, .size = size, .used = 0};
    a->cur = a->n_chunks - 1;
    return PB_OK;
}

static void *tape_arena_alloc(nn_arena *a, size_t n)
{
    n = (n + NN_ALIGN - 1) & ~(size_t)(NN_ALIGN - 1);
    if (n == 0)
        n = NN_ALIGN; /* empty tensors still get a distinct, valid pointer */
    if (a->n_chunks == 0 || a->chunks[a->cur].size - a->chunks[a->cur].used < n) {
        size_t last = a->n_chunks ? a->chunks[a->n_chunks - 1].size : 0;
        size_t size = 2 * last > n ? 2 * last : n;
        if (size < NN_MIN_CHUNK)
            size = NN_MIN_CHUNK;
        if (tape_arena_add_chunk(a, size) != PB_OK)
            return NULL;
    }
    nn_chunk *c = &a->chunks[a->cur];
    void *p = c->base + c->used;
    c->used += n;
    return p;
}

static void tape_arena_free(nn_arena *a)
{
    for (int i = 0; i < a->n_chunks; i++)
        free(a->chunks[i].base);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}

/* Empties the arena; a pass that needed several chunks leaves one chunk as big as all of them,
 * so the next pass of the same size allocates nothing. */
static void tape_arena_reset(nn_arena *a)
{
    if (a->n_chunks > 1) {
        size_t total = 0;
        for (int i = 0; i < a->n_chunks; i++) {
            total += a->chunks[i].size;
            free(a->chunks[i].base);
        }
        a->n_chunks = 0;
        a->cur = 0;
        if (tape_arena_add_chunk(a, total) != PB_OK)
            return; /* the next allocation retries */
    }
    if (a->n_chunks == 1)
        a->chunks[0].used = 0;
    a->cur = 0;
}

static void tape_arena_zero(nn_arena *a)
{
    for (int i = 0; i < a->n_chunks; i++)
        memset(a->chunks[i].base, 0, a->chunks[i].used);
}

pb_nn_tape *pb_nn_tape_new(void)
{
    pb_nn_tape *t = calloc(1, sizeof *t);
    if (t) {
        t->record_grad = 1;
        t->own_gemm = nn_linalg_own_gemm_ok();
    }
    return t;
}

void pb_nn_tape_free(pb_nn_tape *t)
{
    if (!t)
        return;
    tape_arena_free(&t->data);
    tape_arena_free(&t->grad);
    free(t->rec);
    free(t);
}

void pb_nn_tape_reset(pb_nn_tape *t, int record_grad)
{
    if (!t)
        return;
    tape_arena_reset(&t->data);
    tape_arena_reset(&t->grad);
    t->n_rec = 0;
    t->transposed = NULL;
    t->record_grad = record_grad != 0;
    t->failed = 0;
    t->msg[0] = '\0';
}

int pb_nn_tape_status(const pb_nn_tape *t, pb_error *err)
{
    if (!t)
        return pb_errorf(err, "nn: no tape");
    if (t->failed)
        return pb_errorf(err, "%s", t->msg);
    return PB_OK;
}

void *nn_tape_fail(pb_nn_tape *t, const char *fmt, ...)
{
    if (!t || t->failed)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
    t->failed = 1;
    return NULL;
}

void *nn_tape_alloc(pb_nn_tape *t, size_t n)
{
    void *p = tape_arena_alloc(&t->data, n);
    if (!p)
        nn_tape_fail(t, "nn: out of memory (%zu bytes)", n);
    return p;
}

float *nn_tape_grad_scratch(pb_nn_tape *t, size_t n_floats)
{
    float *p = tape_arena_alloc(&t->grad, n_floats * sizeof(float));
    if (!p)
        nn_tape_fail(t, "nn: out of memory (%zu gradient values)", n_floats);
    return p;
}

/* Just the struct; the caller points data and grad somewhere. */
static pb_nn_tensor *tape_header(pb_nn_tape *t, int rows, int cols)
{
    pb_nn_tensor *x = nn_tape_alloc(t, sizeof *x);
    if (x)
        *x = (pb_nn_tensor){.rows = rows, .cols = cols, .data = NULL, .grad = NULL};
    return x;
}

pb_nn_tensor *nn_tape_tensor(pb_nn_tape *t, int rows, int cols, int with_grad)
{
    if (rows < 0 || cols < 0)
        return nn_tape_fail(t, "nn: negative shape %dx%d", rows, cols);
    if ((size_t)rows * (size_t)cols > (SIZE_MAX / 2 - NN_ALIGN) / sizeof(float))
        return nn_tape_fail(t, "nn: shape %dx%d is too large", rows, cols);
    /* The struct and the values in one block; the values start on the next alignment boundary. */
    size_t n = (size_t)rows * (size_t)cols;
    unsigned char *block = nn_tape_alloc(t, NN_ALIGN + n * sizeof(float));
    if (!block)
        return NULL;
    pb_nn_tensor *x = (pb_nn_tensor *)(void *)block;
    *x = (pb_nn_tensor){.rows = rows, .cols = cols, .data = (float *)(void *)(block + NN_ALIGN)};
    if (with_grad && t->record_grad) {
        x->grad = nn_tape_grad_scratch(t, n);
        if (!x->grad)
            return NULL;
    }
    return x;
}

nn_record *nn_tape_record(pb_nn_tape *t, nn_backward_fn backward, pb_nn_tensor *out)
{
    if (t->n_rec == t->cap_rec) {
        size_t cap = t->cap_rec ? 2 * t->cap_rec : 256;
        nn_record *r = realloc(t->rec, cap * sizeof *r);
        if (!r)
            return nn_tape_fail(t, "nn: out of memory (%zu tape records)", cap);
        t->rec = r;
        t->cap_rec = cap;
    }
    nn_record *r = &t->rec[t->n_rec++];
    memset(r, 0, sizeof *r);
    r->backward = backward;
    r->out = out;
    return r;
}

pb_nn_tensor *pb_nn_constant(pb_nn_tape *t, int rows, int cols, const float *values)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_constant", 0, NULL, NULL, NULL))
        return NULL;
    pb_nn_tensor *x = nn_tape_tensor(t, rows, cols, 0);
    if (!x)
        return NULL;
    if (values)
        memcpy(x->data, values, nn_numel(x) * sizeof(float));
    else
        memset(x->data, 0, nn_numel(x) * sizeof(float));
    return x;
}

pb_nn_tensor *pb_nn_buffer(pb_nn_tape *t, int rows, int cols)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_buffer", 0, NULL, NULL, NULL))
        return NULL;
    pb_nn_tensor *x = nn_tape_tensor(t, rows, cols, 1);
    if (x)
        memset(x->data, 0, nn_numel(x) * sizeof(float));
    return x;
}

pb_nn_tensor *pb_nn_param(pb_nn_tape *t, pb_nn_params *p, int id)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_param", 0, NULL, NULL, NULL))
        return NULL;
    if (!p)
        return nn_tape_fail(t, "pb_nn_param: no parameter set");
    if (id < 0 || id >= p->n)
        return nn_tape_fail(t, "pb_nn_param: no parameter with id %d (the set has %d)", id, p->n);
    const nn_param_info *in = &p->info[id];
    pb_nn_tensor *x = tape_header(t, in->rows, in->cols);
    if (!x)
        return NULL;
    x->data = p->values + in->offset;
    if (t->record_grad)
        x->grad = p->grads + in->offset;
    return x;
}

pb_nn_tensor *pb_nn_rows(pb_nn_tape *t, pb_nn_tensor *x, int start, int count)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_rows", 1, x, NULL, NULL))
        return NULL;
    if (start < 0 || count < 0 || start > x->rows - count)
        return nn_tape_fail(t, "pb_nn_rows: rows %d..%d+%d of a %dx%d tensor", start, start, count,
                            x->rows, x->cols);
    pb_nn_tensor *v = tape_header(t, count, x->cols);
    if (!v)
        return NULL;
    size_t off = (size_t)start * (size_t)x->cols;
    v->data = x->data + off;
    v->grad = x->grad ? x->grad + off : NULL;
    return v;
}

pb_nn_tensor *pb_nn_reshape(pb_nn_tape *t, pb_nn_tensor *x, int rows, int cols)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_reshape", 1, x, NULL, NULL))
        return NULL;
    if (rows < 0 || cols < 0 || (size_t)rows * (size_t)cols != nn_numel(x))
        return nn_tape_fail(t, "pb_nn_reshape: cannot see a %dx%d tensor as %dx%d", x->rows,
                            x->cols, rows, cols);
    pb_nn_tensor *v = tape_header(t, rows, cols);
    if (!v)
        return NULL;
    v->data = x->data;
    v->grad = x->grad;
    return v;
}

int pb_nn_backward(pb_nn_tape *t, pb_nn_tensor *y, const float *seed, pb_error *err)
{
    if (pb_nn_tape_status(t, err) != PB_OK)
        return PB_ERR;
    if (!y)
        return pb_errorf(err, "pb_nn_backward: no output tensor");
    if (!y->grad)
        return pb_errorf(err, "pb_nn_backward: the output does not depend on any parameter%s",
                         t->record_grad ? "" : " (the tape does not record gradients)");
    tape_arena_zero(&t->grad);
    t->passes++;
    size_t n = nn_numel(y);
    for (size_t i = 0; i < n; i++)
        y->grad[i] += seed ? seed[i] : 1.0f;
    for (size_t i = t->n_rec; i-- > 0;) {
        t->rec[i].backward(&t->rec[i]);
        t->flop += t->rec[i].flop;
    }
    return PB_OK;
}

nn_transposed *nn_tape_transposed(pb_nn_tape *t, const float *src, int row0, int rows, int cols)
{
    for (nn_transposed *tr = t->transposed; tr; tr = tr->next)
        if (tr->src == src && tr->row0 == row0 && tr->rows == rows && tr->cols == cols)
            return tr;
    nn_transposed *tr = nn_tape_alloc(t, sizeof *tr);
    float *data = tr ? nn_tape_alloc(t, (size_t)rows * (size_t)cols * sizeof(float)) : NULL;
    if (!data)
        return NULL;
    *tr = (nn_transposed){.src = src,
                          .row0 = row0,
                          .rows = rows,
                          .cols = cols,
                          .data = data,
                          .pass = 0,
                          .next = t->transposed};
    t->transposed = tr;
    return tr;
}

const float *nn_transposed_data(const pb_nn_tape *t, nn_transposed *tr)
{
    if (tr->pass != t->passes) {
        for (int i = 0; i < tr->rows; i++) {
            const float *row = tr->src + (size_t)(tr->row0 + i) * (size_t)tr->cols;
            for (int j = 0; j < tr->cols; j++)
                tr->data[(size_t)j * (size_t)tr->rows + (size_t)i] = row[j];
        }
        tr->pass = t->passes;
    }
    return tr->data;
}

double pb_nn_tape_flop(const pb_nn_tape *t)
{
    return t ? t->flop : 0;
}

void pb_nn_tape_count(pb_nn_tape *t, double flop)
{
    if (t)
        t->flop += flop;
}

void *pb_nn_alloc(pb_nn_tape *t, size_t n)
{
    return t ? nn_tape_alloc(t, n) : NULL;
}

static void tape_custom_backward(const nn_record *r)
{
    r->custom(r->aux, r->out, r->list, r->n_list);
}

pb_nn_tensor *pb_nn_custom(pb_nn_tape *t, int rows, int cols, int n_in, pb_nn_tensor *const *in,
                           pb_nn_backward_fn backward, void *ctx)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_custom", 0, NULL, NULL, NULL))
        return NULL;
    if (n_in < 0 || (n_in > 0 && !in) || !backward)
        return nn_tape_fail(t, "pb_nn_custom: needs an input list and a backward function");
    int grad = 0;
    for (int i = 0; i < n_in; i++) {
        if (!in[i])
            return nn_tape_fail(t, "pb_nn_custom: input %d is NULL", i + 1);
        grad |= nn_tape_wants_grad(t, in[i], NULL, NULL);
    }
    pb_nn_tensor *y = nn_tape_tensor(t, rows, cols, grad);
    if (!y || !grad)
        return y;
    pb_nn_tensor **list = nn_tape_alloc(t, (size_t)n_in * sizeof *list);
    nn_record *r = list ? nn_tape_record(t, tape_custom_backward, y) : NULL;
    if (!r)
        return NULL;
    for (int i = 0; i < n_in; i++)
        list[i] = in[i];
    r->list = list;
    r->n_list = n_in;
    r->custom = backward;
    r->aux = ctx;
    return y;
}
