/* fuzz_config.c — fuzz target for the Lua config loader (config.c): a config that loads gives a
 * complete experiment; one that does not gives a one-line error that names the file first. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include "config/config.h"
#include "fuzz_target.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Aborts with a message when an invariant does not hold. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_config: invariant violated at %s:%d: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The profile the seed corpus defines; inputs that mention profiles are loaded with it too. */
#define FUZZ_PROFILE "quick"

/* The config is written to <fuzz_dir>/fuzz.lua; the folder is private and removed at exit. */
static char fuzz_dir[64];
static char fuzz_path[96];

static void fuzz_cleanup(void)
{
    unlink(fuzz_path);
    rmdir(fuzz_dir);
}

static void fuzz_write_config(const uint8_t *data, size_t size)
{
    if (!fuzz_path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/pb-fuzz-config-XXXXXX",
                 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        CHECK(mkdtemp(fuzz_dir));
        snprintf(fuzz_path, sizeof fuzz_path, "%s/fuzz.lua", fuzz_dir);
        atexit(fuzz_cleanup);
    }
    /* A new file each time: truncating one makes ext4 flush it to disk at close (auto_da_alloc),
     * which costs milliseconds per input. */
    unlink(fuzz_path);
    FILE *f = fopen(fuzz_path, "wb");
    CHECK(f);
    CHECK(fwrite(data, 1, size, f) == size);
    CHECK(fclose(f) == 0);
}

/* Lines as Lua counts them: "\n", "\r", "\r\n" and "\n\r" are one line break each (llex.c). */
static int fuzz_lua_lines(const uint8_t *s, size_t n)
{
    int lines = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\n' && s[i] != '\r')
            continue;
        if (i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r') && s[i + 1] != s[i])
            i++;
        lines++;
    }
    return lines;
}

static void fuzz_check_line(int line, int max_line)
{
    if (line < 1 || line > max_line) {
        fprintf(stderr, "fuzz_config: line %d is outside the config's lines 1..%d\n", line,
                max_line);
        abort();
    }
}

static void fuzz_check_strings(char *const *s, int n, int min_n)
{
    CHECK(n >= min_n && (n == 0 || s));
    for (int i = 0; i < n; i++)
        CHECK(s[i] && s[i][0]);
}

/* Plugin references: names non-empty, options sorted by unique key, each with a value. */
static void fuzz_check_plugins(const cfg_plugin_list *l, int min_n, int max_line)
{
    CHECK(l->n >= min_n && (l->n == 0 || l->items));
    for (int i = 0; i < l->n; i++) {
        const cfg_plugin *p = &l->items[i];
        CHECK(p->name && p->name[0]);
        fuzz_check_line(p->line, max_line);
        CHECK(p->n_opts >= 0 && (p->n_opts == 0 || p->opts));
        for (int k = 0; k < p->n_opts; k++) {
            const cfg_option *o = &p->opts[k];
            CHECK(o->key && (k == 0 || strcmp(p->opts[k - 1].key, o->key) < 0));
            fuzz_check_line(o->line, max_line);
            CHECK(o->n_values >= 1 && o->values);
            for (int j = 0; j < o->n_values; j++)
                CHECK(o->values[j]);
        }
    }
}

/* config_json is a JSON object that agrees with the structs. */
static void fuzz_check_json(const experiment *x)
{
    CHECK(x->config_json);
    json_error_t je;
    json_t *root = json_loads(x->config_json, 0, &je);
    CHECK(json_is_object(root));
    CHECK(json_is_string(json_object_get(root, "name")));
    CHECK(strcmp(json_string_value(json_object_get(root, "name")), x->name) == 0);
    CHECK((int)json_array_size(json_object_get(root, "devices")) == x->n_devices);
    CHECK((int)json_array_size(json_object_get(root, "placer")) == x->placers.n);
    json_decref(root);
}

static void fuzz_check_experiment(const experiment *x, const char *profile, int max_line)
{
    CHECK(x->file && strcmp(x->file, fuzz_path) == 0);
    CHECK(profile ? x->profile && strcmp(x->profile, profile) == 0 : !x->profile);
    CHECK(x->name && x->name[0] && !strchr(x->name, '/'));
    CHECK(x->repeats >= 1 && x->repeats <= 1000000);
    CHECK(x->episodes >= 0 && x->sim_calls >= 0);
    CHECK(isfinite(x->timeout_s) && x->timeout_s >= 0);
    fuzz_check_strings(x->datasets, x->n_datasets, 1);
    CHECK(x->n_devices >= 1 && x->devices);
    for (int i = 0; i < x->n_devices; i++)
        CHECK(x->devices[i] >= 1 && x->devices[i] <= 65536);
    fuzz_check_strings(x->clusters, x->n_clusters, 1);
    fuzz_check_plugins(&x->simulators, 1, max_line);
    fuzz_check_plugins(&x->placers, 1, max_line);
    fuzz_check_plugins(&x->embeddings, 0, max_line);
    fuzz_check_plugins(&x->traversals, 0, max_line);
    fuzz_check_strings(x->plugin_path, x->n_plugin_path, 0);
    CHECK(x->results && x->results[0]);
    const int lines[] = {
        x->line_datasets, x->line_devices,     x->line_clusters,   x->line_simulators,
        x->line_placers,  x->line_embeddings,  x->line_traversals, x->line_name,
        x->line_seed,     x->line_repeats,     x->line_episodes,   x->line_sim_calls,
        x->line_timeout,  x->line_plugin_path, x->line_results,    x->line_experiment};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        fuzz_check_line(lines[i], max_line);
    fuzz_check_json(x);
}

/* A failed load returns nothing and one line: "<config>:<line>: ..." with a line the config has,
 * or a message that names a file of the config's folder (an included file). */
static void fuzz_check_error(const experiment *x, const pb_error *err, int max_line)
{
    CHECK(x == NULL);
    if (strpbrk(err->msg, "\r\n")) {
        fprintf(stderr, "fuzz_config: the error is not one line: %s\n", err->msg);
        abort();
    }
    size_t n = strlen(fuzz_path), d = strlen(fuzz_dir);
    if (strncmp(err->msg, fuzz_path, n) == 0 && err->msg[n] == ':') {
        const char *p = err->msg + n + 1;
        if (isdigit((unsigned char)*p))
            fuzz_check_line(atoi(p), max_line);
        return;
    }
    if (strncmp(err->msg, fuzz_dir, d) != 0 || err->msg[d] != '/') {
        fprintf(stderr, "fuzz_config: the error does not start with the config's path: %s\n",
                err->msg);
        abort();
    }
}

static void fuzz_load(const char *profile, int max_line)
{
    experiment *x = NULL;
    pb_error err = {{0}};
    if (config_load(fuzz_path, profile, &x, &err) != PB_OK) {
        fuzz_check_error(x, &err, max_line);
        return;
    }
    CHECK(x);
    fuzz_check_experiment(x, profile, max_line);
    experiment_free(x);
}

/* Whether the input mentions `word` (it may hold NUL bytes, so no strstr). */
static int fuzz_mentions(const uint8_t *data, size_t size, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, word, n) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_config(data, size);
    int max_line = fuzz_lua_lines(data, size);
    fuzz_load(NULL, max_line);
    if (fuzz_mentions(data, size, "profiles"))
        fuzz_load(FUZZ_PROFILE, max_line);
    return 0;
}
