/* nn_params.c — named sets of trainable tensors: Glorot init, flat storage, JSON save/load (with
 * an Adam optimizer's state when asked). */
#include "nn_internal.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS_FORMAT "placebench-nn-params"
/* Version 1 writes every value as a JSON number.  Version 2 writes a tensor of more than
 * PARAMS_INLINE_MAX values as "values_b64", the base64 of its float32 values (little-endian,
 * row-major): a quarter of the text, and no JSON value per number to build when loading (TAG's
 * 14.4 M-value network is a 77 MB file instead of 266 MB).  Files without such a tensor stay
 * version 1; both load.  Either version may carry an "adam" section (pb_nn_params_save_adam): the
 * optimizer's steps and hyper-parameters, and per tensor "adam_m_b64" / "adam_v_b64", the base64
 * of its moments as little-endian float64s; readers that do not want it ignore it. */
#define PARAMS_VERSION 1
#define PARAMS_VERSION_B64 2
#define PARAMS_INLINE_MAX 65536

pb_nn_params *pb_nn_params_new(void)
{
    return calloc(1, sizeof(pb_nn_params));
}

void pb_nn_params_free(pb_nn_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++)
        free(p->info[i].name);
    free(p->info);
    free(p->values);
    free(p->grads);
    free(p);
}

int pb_nn_params_find(const pb_nn_params *p, const char *name)
{
    for (int i = 0; p && name && i < p->n; i++)
        if (strcmp(p->info[i].name, name) == 0)
            return i;
    return -1;
}

int pb_nn_params_count(const pb_nn_params *p)
{
    return p ? p->n : 0;
}

const char *pb_nn_params_name(const pb_nn_params *p, int id)
{
    return p && id >= 0 && id < p->n ? p->info[id].name : NULL;
}

void pb_nn_params_shape(const pb_nn_params *p, int id, int *rows, int *cols)
{
    int ok = p && id >= 0 && id < p->n;
    if (rows)
        *rows = ok ? p->info[id].rows : 0;
    if (cols)
        *cols = ok ? p->info[id].cols : 0;
}

size_t pb_nn_params_size(const pb_nn_params *p)
{
    return p ? p->size : 0;
}

size_t pb_nn_params_offset(const pb_nn_params *p, int id)
{
    return p && id >= 0 && id < p->n ? p->info[id].offset : 0;
}

float *pb_nn_params_values(pb_nn_params *p)
{
    return p ? p->values : NULL;
}

float *pb_nn_params_grads(pb_nn_params *p)
{
    return p ? p->grads : NULL;
}

void pb_nn_params_zero_grad(pb_nn_params *p)
{
    if (p && p->size)
        memset(p->grads, 0, p->size * sizeof(float));
}

static int params_reserve(pb_nn_params *p, size_t need)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        nn_param_info *info = realloc(p->info, (size_t)cap * sizeof *info);
        if (!info)
            return PB_ERR;
        p->info = info;
        p->cap = cap;
    }
    if (need <= p->cap_size)
        return PB_OK;
    size_t cap = p->cap_size ? 2 * p->cap_size : 1024;
    while (cap < need)
        cap *= 2;
    float *v = realloc(p->values, cap * sizeof(float));
    if (!v)
        return PB_ERR;
    p->values = v;
    float *g = realloc(p->grads, cap * sizeof(float));
    if (!g)
        return PB_ERR;
    p->grads = g;
    p->cap_size = cap;
    return PB_OK;
}

static void params_init_values(float *v, int rows, int cols, int init, pb_rng *rng)
{
    size_t n = (size_t)rows * (size_t)cols;
    double r = sqrt(6.0 / (double)(rows + cols));
    for (size_t i = 0; i < n; i++) {
        if (init == PB_NN_INIT_GLOROT)
            v[i] = (float)((2.0 * pb_rng_uniform(rng) - 1.0) * r);
        else
            v[i] = init == PB_NN_INIT_ONES ? 1.0f : 0.0f;
    }
}

int pb_nn_params_add(pb_nn_params *p, const char *name, int rows, int cols, int init, pb_rng *rng,
                     pb_error *err)
{
    if (!p || !name || !*name)
        return pb_errorf(err, "nn parameters: a parameter needs a set and a non-empty name");
    if (rows < 1 || cols < 1)
        return pb_errorf(err, "nn parameter '%s': shape %dx%d is not positive", name, rows, cols);
    if (init < PB_NN_INIT_GLOROT || init > PB_NN_INIT_ONES)
        return pb_errorf(err, "nn parameter '%s': unknown initialisation %d", name, init);
    if (init == PB_NN_INIT_GLOROT && !rng)
        return pb_errorf(err, "nn parameter '%s': Glorot initialisation needs a generator", name);
    if (pb_nn_params_find(p, name) >= 0)
        return pb_errorf(err, "nn parameter '%s' is already defined", name);
    size_t n = (size_t)rows * (size_t)cols;
    char *copy = malloc(strlen(name) + 1);
    if (!copy || params_reserve(p, p->size + n) != PB_OK) {
        free(copy);
        return pb_errorf(err, "nn parameter '%s': out of memory", name);
    }
    strcpy(copy, name);
    p->info[p->n] = (nn_param_info){.name = copy, .rows = rows, .cols = cols, .offset = p->size};
    params_init_values(p->values + p->size, rows, cols, init, rng);
    memset(p->grads + p->size, 0, n * sizeof(float));
    p->size += n;
    return p->n++;
}

static const char params_b64_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Element k of v (width 4: float32, 8: float64) as its bits. */
static uint64_t params_bits(const void *v, size_t k, int width)
{
    if (width == 8) {
        uint64_t u;
        memcpy(&u, (const double *)v + k, 8);
        return u;
    }
    uint32_t u;
    memcpy(&u, (const float *)v + k, 4);
    return u;
}

/* The n values of v (float32 when width is 4, float64 when 8) as base64 of their little-endian
 * bytes; NULL when out of memory. */
static char *params_b64_encode(const void *v, size_t n, int width)
{
    size_t bytes = (size_t)width * n, len = 4 * ((bytes + 2) / 3);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned char b[3];
    int have = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t u = params_bits(v, k, width);
        for (int j = 0; j < width; j++) {
            b[have++] = (unsigned char)(u >> (8 * j));
            if (have == 3) {
                out[o++] = params_b64_digits[b[0] >> 2];
                out[o++] = params_b64_digits[((b[0] & 3) << 4) | (b[1] >> 4)];
                out[o++] = params_b64_digits[((b[1] & 15) << 2) | (b[2] >> 6)];
                out[o++] = params_b64_digits[b[2] & 63];
                have = 0;
            }
        }
    }
    if (have > 0) {
        if (have == 1)
            b[1] = 0;
        out[o++] = params_b64_digits[b[0] >> 2];
        out[o++] = params_b64_digits[((b[0] & 3) << 4) | (b[1] >> 4)];
        out[o++] = have == 2 ? params_b64_digits[(b[1] & 15) << 2] : '=';
        out[o++] = '=';
    }
    out[o] = 0;
    return out;
}

static int params_b64_value(char c)
{
    const char *at = c ? strchr(params_b64_digits, c) : NULL;
    return at ? (int)(at - params_b64_digits) : -1;
}

/* Decodes text into exactly n values of v (float32 when width is 4, float64 when 8); PB_ERR when
 * it is not base64 of width * n bytes. */
static int params_b64_decode(const char *text, size_t len, void *v, size_t n, int width)
{
    if (len != 4 * (((size_t)width * n + 2) / 3))
        return PB_ERR;
    size_t got = 0;
    uint64_t u = 0;
    int shift = 0;
    for (size_t i = 0; i < len; i += 4) {
        int d[4];
        for (int j = 0; j < 4; j++)
            d[j] = text[i + j] == '=' && i + 4 == len && j >= 2 ? 0 : params_b64_value(text[i + j]);
        if (d[0] < 0 || d[1] < 0 || d[2] < 0 || d[3] < 0)
            return PB_ERR;
        unsigned char b[3] = {(unsigned char)(d[0] << 2 | d[1] >> 4),
                              (unsigned char)((d[1] & 15) << 4 | d[2] >> 2),
                              (unsigned char)((d[2] & 3) << 6 | d[3])};
        for (int j = 0; j < 3 && got < n; j++) {
            u |= (uint64_t)b[j] << shift;
            shift += 8;
            if (shift == 8 * width) {
                if (width == 8) {
                    memcpy((double *)v + got, &u, 8);
                } else {
                    uint32_t w = (uint32_t)u;
                    memcpy((float *)v + got, &w, 4);
                }
                got++;
                u = 0;
                shift = 0;
            }
        }
    }
    return got == n ? PB_OK : PB_ERR;
}

/* Sets key of o to the base64 of n values of v (width 4 or 8); PB_ERR when out of memory. */
static int params_set_b64(json_t *o, const char *key, const void *v, size_t n, int width)
{
    char *text = params_b64_encode(v, n, width);
    json_t *js = text ? json_string(text) : NULL;
    free(text);
    return js && json_object_set_new(o, key, js) == 0 ? PB_OK : PB_ERR;
}

/* Tensor id of p as JSON; with a (stepped at least once) its Adam moments as well. */
static json_t *params_tensor_json(const pb_nn_params *p, int id, const pb_nn_adam *a, pb_error *err)
{
    const nn_param_info *in = &p->info[id];
    json_t *o = json_object();
    size_t n = (size_t)in->rows * (size_t)in->cols;
    const float *v = p->values + in->offset;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k])) {
            json_decref(o);
            pb_errorf(err, "nn parameter '%s': value %zu is not finite", in->name, k);
            return NULL;
        }
    json_object_set_new(o, "name", json_string(in->name));
    json_object_set_new(o, "rows", json_integer(in->rows));
    json_object_set_new(o, "cols", json_integer(in->cols));
    int rc = PB_OK;
    if (n > PARAMS_INLINE_MAX) {
        rc = params_set_b64(o, "values_b64", v, n, 4);
    } else {
        json_t *values = json_array();
        for (size_t k = 0; k < n; k++)
            json_array_append_new(values, json_real((double)v[k]));
        json_object_set_new(o, "values", values);
    }
    if (rc == PB_OK && a && a->t > 0)
        rc = params_set_b64(o, "adam_m_b64", a->m + in->offset, n, 8) != PB_OK ||
                     params_set_b64(o, "adam_v_b64", a->v + in->offset, n, 8) != PB_OK
                 ? PB_ERR
                 : PB_OK;
    if (rc != PB_OK) {
        json_decref(o);
        pb_errorf(err, "nn parameter '%s': out of memory", in->name);
        return NULL;
    }
    return o;
}

int pb_nn_params_save(const pb_nn_params *p, const char *path, pb_error *err)
{
    return pb_nn_params_save_adam(p, NULL, path, err);
}

int pb_nn_params_save_adam(const pb_nn_params *p, const pb_nn_adam *a, const char *path,
                           pb_error *err)
{
    if (!p || !path)
        return pb_errorf(err, "nn parameters: nothing to save or no path");
    if (a && a->t > 0 && a->n != p->size)
        return pb_errorf(err, "%s: the optimizer holds %zu moments, the parameters %zu values",
                         path, a->n, p->size);
    if (a && a->t <= 0)
        a = NULL; /* a fresh optimizer has nothing to continue from */
    json_t *root = json_object(), *tensors = json_array();
    json_object_set_new(root, "format", json_string(PARAMS_FORMAT));
    int large = 0;
    for (int i = 0; i < p->n; i++)
        large |= (size_t)p->info[i].rows * (size_t)p->info[i].cols > PARAMS_INLINE_MAX;
    json_object_set_new(root, "version", json_integer(large ? PARAMS_VERSION_B64 : PARAMS_VERSION));
    json_object_set_new(root, "tensors", tensors);
    if (a) {
        json_t *adam = json_object();
        json_object_set_new(adam, "steps", json_integer((json_int_t)a->t));
        json_object_set_new(adam, "beta1", json_real(a->beta1));
        json_object_set_new(adam, "beta2", json_real(a->beta2));
        json_object_set_new(adam, "epsilon", json_real(a->epsilon));
        json_object_set_new(root, "adam", adam);
    }
    for (int i = 0; i < p->n; i++) {
        json_t *o = params_tensor_json(p, i, a, err);
        if (!o) {
            json_decref(root);
            return PB_ERR;
        }
        json_array_append_new(tensors, o);
    }
    /* Nine significant digits give every float32 back exactly; the rename makes the file appear
     * whole or not at all. */
    size_t len = strlen(path) + 5;
    char *tmp = malloc(len);
    if (!tmp) {
        json_decref(root);
        return pb_errorf(err, "%s: out of memory", path);
    }
    snprintf(tmp, len, "%s.tmp", path);
    errno = 0;
    int rc = json_dump_file(root, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        int e = errno;
        remove(tmp);
        free(tmp);
        return pb_errorf(err, "%s: cannot write the parameters (%s)", path,
                         e ? strerror(e) : "write failed");
    }
    free(tmp);
    return PB_OK;
}

static int params_int_field(const json_t *o, const char *key, int *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 30)
        return PB_ERR;
    *out = (int)json_integer_value(v);
    return PB_OK;
}

/* What a load stages before it changes anything: the values and, when the optimizer's state is
 * read, its moments (m at [0, size), v at [size, 2 size)). */
typedef struct params_load {
    const pb_nn_params *p;
    const char *path;
    unsigned char *seen;
    float *staged;
    double *moments; /* NULL: the file's moments are not read */
} params_load;

/* Decodes the moment `key` of tensor `name` (n values) into dst; v must be >= 0. */
static int params_load_moment(const params_load *l, const json_t *o, const char *key,
                              const char *name, size_t n, double *dst, pb_error *err)
{
    const json_t *b64 = json_object_get(o, key);
    if (!json_is_string(b64))
        return pb_errorf(err, "%s: tensor '%s' has no %s, which the file's 'adam' section needs",
                         l->path, name, key);
    if (params_b64_decode(json_string_value(b64), json_string_length(b64), dst, n, 8) != PB_OK)
        return pb_errorf(err, "%s: tensor '%s': %s is not base64 of %zu float64s", l->path, name,
                         key, n);
    int second = strcmp(key, "adam_v_b64") == 0;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(dst[k]) || (second && dst[k] < 0))
            return pb_errorf(err, "%s: tensor '%s': %s value %zu is %s", l->path, name, key, k,
                             second ? "negative or not finite" : "not finite");
    return PB_OK;
}

/* Checks one tensor entry of the file against p and copies its values into staged. */
static int params_load_tensor(const params_load *l, const json_t *o, size_t i, pb_error *err)
{
    const pb_nn_params *p = l->p;
    const char *path = l->path;
    float *staged = l->staged;
    const char *name = json_string_value(json_object_get(o, "name"));
    int rows, cols;
    const json_t *values = json_object_get(o, "values");
    const json_t *b64 = json_object_get(o, "values_b64");
    if (!json_is_object(o) || !name || params_int_field(o, "rows", &rows) != PB_OK ||
        params_int_field(o, "cols", &cols) != PB_OK ||
        (!json_is_array(values) && !json_is_string(b64)))
        return pb_errorf(err, "%s: tensors[%zu] needs a name, rows, cols and values", path, i);
    int id = pb_nn_params_find(p, name);
    if (id < 0)
        return pb_errorf(err, "%s: tensor '%s' is not a parameter of this model", path, name);
    if (l->seen[id])
        return pb_errorf(err, "%s: tensor '%s' appears twice", path, name);
    l->seen[id] = 1;
    const nn_param_info *in = &p->info[id];
    if (rows != in->rows || cols != in->cols)
        return pb_errorf(err, "%s: tensor '%s' is %dx%d in the file, the model expects %dx%d", path,
                         name, rows, cols, in->rows, in->cols);
    size_t n = (size_t)rows * (size_t)cols;
    if (l->moments &&
        (params_load_moment(l, o, "adam_m_b64", name, n, l->moments + in->offset, err) != PB_OK ||
         params_load_moment(l, o, "adam_v_b64", name, n, l->moments + p->size + in->offset, err) !=
             PB_OK))
        return PB_ERR;
    if (!json_is_array(values)) {
        float *dst = staged + in->offset;
        if (params_b64_decode(json_string_value(b64), json_string_length(b64), dst, n, 4) != PB_OK)
            return pb_errorf(err, "%s: tensor '%s': values_b64 is not base64 of %dx%d float32s",
                             path, name, rows, cols);
        for (size_t k = 0; k < n; k++)
            if (!isfinite(dst[k]))
                return pb_errorf(err, "%s: tensor '%s' value %zu is not a finite float", path, name,
                                 k);
        return PB_OK;
    }
    if (json_array_size(values) != n)
        return pb_errorf(err, "%s: tensor '%s' has %zu values, %dx%d needs %zu", path, name,
                         json_array_size(values), rows, cols, n);
    for (size_t k = 0; k < n; k++) {
        const json_t *v = json_array_get(values, k);
        double d = json_is_number(v) ? json_number_value(v) : NAN;
        if (!isfinite(d) || fabs(d) > FLT_MAX)
            return pb_errorf(err, "%s: tensor '%s' value %zu is not a finite float", path, name, k);
        staged[in->offset + k] = (float)d;
    }
    return PB_OK;
}

/* A hyper-parameter of the file's 'adam' section must be the optimizer's (to the 9 digits the
 * file keeps). */
static int params_adam_same(const char *path, const json_t *adam, const char *key, double mine,
                            pb_error *err)
{
    const json_t *v = json_object_get(adam, key);
    if (!json_is_number(v))
        return pb_errorf(err, "%s: adam.%s is missing or not a number", path, key);
    char a[32], b[32];
    snprintf(a, sizeof a, "%.9g", json_number_value(v));
    snprintf(b, sizeof b, "%.9g", mine);
    if (strcmp(a, b) != 0)
        return pb_errorf(err,
                         "%s: adam.%s is %s in the file, %s in this optimizer (one optimizer "
                         "continues only with its own settings)",
                         path, key, a, b);
    return PB_OK;
}

/* The file's 'adam' section: *steps > 0 when it has one and a wants it, else 0. */
static int params_load_adam_header(const char *path, const json_t *root, const pb_nn_adam *a,
                                   long long *steps, pb_error *err)
{
    *steps = 0;
    const json_t *adam = json_object_get(root, "adam");
    if (!adam || !a)
        return PB_OK;
    const json_t *t = json_object_get(adam, "steps");
    if (!json_is_object(adam) || !json_is_integer(t) || json_integer_value(t) < 1)
        return pb_errorf(err, "%s: 'adam' needs an object with steps >= 1", path);
    if (params_adam_same(path, adam, "beta1", a->beta1, err) != PB_OK ||
        params_adam_same(path, adam, "beta2", a->beta2, err) != PB_OK ||
        params_adam_same(path, adam, "epsilon", a->epsilon, err) != PB_OK)
        return PB_ERR;
    *steps = (long long)json_integer_value(t);
    return PB_OK;
}

static int params_load_json(const params_load *l, const json_t *root, pb_error *err)
{
    const pb_nn_params *p = l->p;
    const char *path = l->path;
    const char *format = json_string_value(json_object_get(root, "format"));
    const json_t *version = json_object_get(root, "version");
    const json_t *tensors = json_object_get(root, "tensors");
    if (!format || strcmp(format, PARAMS_FORMAT) != 0)
        return pb_errorf(err, "%s: not a placebench parameter file (format is not '%s')", path,
                         PARAMS_FORMAT);
    if (!json_is_integer(version) || (json_integer_value(version) != PARAMS_VERSION &&
                                      json_integer_value(version) != PARAMS_VERSION_B64))
        return pb_errorf(err, "%s: parameter file version is not %d or %d", path, PARAMS_VERSION,
                         PARAMS_VERSION_B64);
    if (!json_is_array(tensors))
        return pb_errorf(err, "%s: 'tensors' is not an array", path);
    for (size_t i = 0; i < json_array_size(tensors); i++)
        if (params_load_tensor(l, json_array_get(tensors, i), i, err) != PB_OK)
            return PB_ERR;
    for (int id = 0; id < p->n; id++)
        if (!l->seen[id])
            return pb_errorf(err, "%s: parameter '%s' (%dx%d) is missing from the file", path,
                             p->info[id].name, p->info[id].rows, p->info[id].cols);
    return PB_OK;
}

int pb_nn_params_load(pb_nn_params *p, const char *path, pb_error *err)
{
    return pb_nn_params_load_adam(p, NULL, path, NULL, err);
}

/* Moves the staged moments (2 n values) into a, which continues at step `steps`. */
static int params_restore_adam(pb_nn_adam *a, double *moments, size_t n, long long steps,
                               const char *path, pb_error *err)
{
    double *m = malloc((n + 1) * sizeof *m), *v = malloc((n + 1) * sizeof *v);
    if (!m || !v) {
        free(m);
        free(v);
        return pb_errorf(err, "%s: out of memory for the optimizer's moments", path);
    }
    memcpy(m, moments, n * sizeof *m);
    memcpy(v, moments + n, n * sizeof *v);
    free(a->m);
    free(a->v);
    a->m = m;
    a->v = v;
    a->n = n;
    a->t = steps;
    return PB_OK;
}

int pb_nn_params_load_adam(pb_nn_params *p, pb_nn_adam *a, const char *path, int *restored,
                           pb_error *err)
{
    if (restored)
        *restored = 0;
    if (!p || !path)
        return pb_errorf(err, "nn parameters: nothing to load into or no path");
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pb_errorf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    long long steps = 0;
    params_load l = {.p = p, .path = path};
    int rc = params_load_adam_header(path, root, a, &steps, err);
    if (rc == PB_OK) {
        l.seen = calloc((size_t)p->n + 1, 1);
        l.staged = malloc((p->size + 1) * sizeof(float));
        l.moments = steps > 0 ? malloc((2 * p->size + 1) * sizeof(double)) : NULL;
        rc = l.seen && l.staged && (steps == 0 || l.moments)
                 ? params_load_json(&l, root, err)
                 : pb_errorf(err, "%s: out of memory", path);
    }
    if (rc == PB_OK && steps > 0)
        rc = params_restore_adam(a, l.moments, p->size, steps, path, err);
    if (rc == PB_OK && p->size)
        memcpy(p->values, l.staged, p->size * sizeof(float));
    if (rc == PB_OK && restored)
        *restored = steps > 0;
    json_decref(root);
    free(l.seen);
    free(l.staged);
    free(l.moments);
    return rc;
}
