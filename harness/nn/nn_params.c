/* nn_params.c — named sets of trainable tensors: Glorot init, flat storage, JSON save/load. */
#include "nn_internal.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS_FORMAT "placebench-nn-params"
#define PARAMS_VERSION 1

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

static json_t *params_tensor_json(const pb_nn_params *p, int id, pb_error *err)
{
    const nn_param_info *in = &p->info[id];
    json_t *values = json_array(), *o = json_object();
    size_t n = (size_t)in->rows * (size_t)in->cols;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_real((double)p->values[in->offset + k]);
        if (!v) { /* jansson refuses NaN and infinities */
            json_decref(values);
            json_decref(o);
            pb_errorf(err, "nn parameter '%s': value %zu is not finite", in->name, k);
            return NULL;
        }
        json_array_append_new(values, v);
    }
    json_object_set_new(o, "name", json_string(in->name));
    json_object_set_new(o, "rows", json_integer(in->rows));
    json_object_set_new(o, "cols", json_integer(in->cols));
    json_object_set_new(o, "values", values);
    return o;
}

int pb_nn_params_save(const pb_nn_params *p, const char *path, pb_error *err)
{
    if (!p || !path)
        return pb_errorf(err, "nn parameters: nothing to save or no path");
    json_t *root = json_object(), *tensors = json_array();
    json_object_set_new(root, "format", json_string(PARAMS_FORMAT));
    json_object_set_new(root, "version", json_integer(PARAMS_VERSION));
    json_object_set_new(root, "tensors", tensors);
    for (int i = 0; i < p->n; i++) {
        json_t *o = params_tensor_json(p, i, err);
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

/* Checks one tensor entry of the file against p and copies its values into staged. */
static int params_load_tensor(const pb_nn_params *p, const char *path, const json_t *o, size_t i,
                              unsigned char *seen, float *staged, pb_error *err)
{
    const char *name = json_string_value(json_object_get(o, "name"));
    int rows, cols;
    const json_t *values = json_object_get(o, "values");
    if (!json_is_object(o) || !name || params_int_field(o, "rows", &rows) != PB_OK ||
        params_int_field(o, "cols", &cols) != PB_OK || !json_is_array(values))
        return pb_errorf(err, "%s: tensors[%zu] needs a name, rows, cols and values", path, i);
    int id = pb_nn_params_find(p, name);
    if (id < 0)
        return pb_errorf(err, "%s: tensor '%s' is not a parameter of this model", path, name);
    if (seen[id])
        return pb_errorf(err, "%s: tensor '%s' appears twice", path, name);
    seen[id] = 1;
    const nn_param_info *in = &p->info[id];
    if (rows != in->rows || cols != in->cols)
        return pb_errorf(err, "%s: tensor '%s' is %dx%d in the file, the model expects %dx%d", path,
                         name, rows, cols, in->rows, in->cols);
    size_t n = (size_t)rows * (size_t)cols;
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

static int params_load_json(pb_nn_params *p, const char *path, const json_t *root,
                            unsigned char *seen, float *staged, pb_error *err)
{
    const char *format = json_string_value(json_object_get(root, "format"));
    const json_t *version = json_object_get(root, "version");
    const json_t *tensors = json_object_get(root, "tensors");
    if (!format || strcmp(format, PARAMS_FORMAT) != 0)
        return pb_errorf(err, "%s: not a placebench parameter file (format is not '%s')", path,
                         PARAMS_FORMAT);
    if (!json_is_integer(version) || json_integer_value(version) != PARAMS_VERSION)
        return pb_errorf(err, "%s: parameter file version is not %d", path, PARAMS_VERSION);
    if (!json_is_array(tensors))
        return pb_errorf(err, "%s: 'tensors' is not an array", path);
    for (size_t i = 0; i < json_array_size(tensors); i++)
        if (params_load_tensor(p, path, json_array_get(tensors, i), i, seen, staged, err) != PB_OK)
            return PB_ERR;
    for (int id = 0; id < p->n; id++)
        if (!seen[id])
            return pb_errorf(err, "%s: parameter '%s' (%dx%d) is missing from the file", path,
                             p->info[id].name, p->info[id].rows, p->info[id].cols);
    return PB_OK;
}

int pb_nn_params_load(pb_nn_params *p, const char *path, pb_error *err)
{
    if (!p || !path)
        return pb_errorf(err, "nn parameters: nothing to load into or no path");
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pb_errorf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    unsigned char *seen = calloc((size_t)p->n + 1, 1);
    float *staged = malloc((p->size + 1) * sizeof(float));
    int rc = seen && staged ? params_load_json(p, path, root, seen, staged, err)
                            : pb_errorf(err, "%s: out of memory", path);
    if (rc == PB_OK && p->size)
        memcpy(p->values, staged, p->size * sizeof(float));
    json_decref(root);
    free(seen);
    free(staged);
    return rc;
}
