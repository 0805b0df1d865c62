/* config_internal.h — what the files of the config layer share: the evaluation context, the
 * source scanner's tokens and the functions one file defines for the others. */
#ifndef PB_CONFIG_INTERNAL_H
#define PB_CONFIG_INTERNAL_H

/*
 * config.c          loading an experiment: file, context, errors at lines, the two passes, JSON
 * config_scan.c     where things are written in the config's text (config_scan_*)
 * config_lua.c      the sandboxed Lua state shared by configs and catalogs (config_lua_*)
 * config_get.c      reading fields and plugin references into C values (config_get_*)
 * config_convert.c  the evaluated experiment into struct experiment (config_convert_*)
 * config_cluster.c  cluster catalogs: presets evaluated into cfg_cluster (config_cluster_*)
 *
 * A function used by several of these files carries the prefix of the file that defines it
 * (plain config_ is config.c); the others are static.
 */

#include "config.h"

#include <lua.h>

#include <limits.h>
#include <stddef.h>

#define CONFIG_HOOK_COUNT 10000
/* Registry key of the weak table that marks tables made by experiment { ... }. */
#define CONFIG_MARKS "placebench.experiments"

/* ---------------------------------------------------------------- source scanner */

/* Errors found after evaluation (unknown field, bad value) are located by scanning the config's
 * text for where a key is assigned or a plugin name is written; comments and strings are skipped
 * by this small tokenizer so that they never match. */
enum { SCAN_NAME, SCAN_STRING, SCAN_ASSIGN, SCAN_OTHER };

typedef struct scan_token {
    int kind;
    int line;
    const char *text; /* NAME: the name; STRING: the text between the delimiters; else the token */
    size_t len;
} scan_token;

typedef struct config_scan {
    scan_token *tok;
    int n, cap;
} config_scan;

/* Token indices of a table constructor's braces; open < 0 when unknown. */
typedef struct scan_range {
    int open, close;
} scan_range;

/* No table: a range that the text does not show. */
extern const scan_range config_scan_no_range;

/* Tokenizes the config's text into *out (caller frees out->tok); PB_ERR when out of memory. */
int config_scan_source(const char *s, size_t len, config_scan *out);
int config_scan_is(const scan_token *t, int kind, const char *text);
/* First line >= from where `key` is assigned, or 0. */
int config_scan_key_line(const config_scan *s, const char *key, int from);
/* First line >= from holding the string literal `text`, or 0. */
int config_scan_string_line(const config_scan *s, const char *text, int from);
/* Line of the last `return`, where a config that returns the wrong thing is wrong; 1 if none. */
int config_scan_return_line(const config_scan *s);
/* The table whose '{' is token `open`, up to its matching '}'. */
scan_range config_scan_table(const config_scan *s, int open);
/* The table constructor that token k introduces: `k = {`, `k {` or `k ({`. */
scan_range config_scan_table_after(const config_scan *s, int k);
/* Token index of the assignment to `key` directly inside r (not in a nested table), or -1. */
int config_scan_find_key(const config_scan *s, scan_range r, const char *key);
/* Token index of the string literal `text` inside r after token `after`, or -1. */
int config_scan_find_string(const config_scan *s, scan_range r, int after, const char *text);
/* The table of the `experiment { ... }` call written on `line`. */
scan_range config_scan_experiment(const config_scan *s, int line);

/* ---------------------------------------------------------------- evaluation context */

typedef struct config_chunk {
    char short_src[LUA_IDSIZE]; /* how Lua abbreviates the chunk's name in messages */
    char *path;                 /* the file, as errors name it */
} config_chunk;

typedef struct config_mem {
    size_t used, limit;
    int refused; /* an allocation was refused for the limit */
} config_mem;

typedef struct config_ctx {
    const char *path;    /* the config, as given */
    const char *profile; /* NULL for none */
    pb_error *err;
    char *chunkname;     /* "@" path */
    char *dir;           /* folder of path as given, "" for the working directory */
    char root[PATH_MAX]; /* real path of that folder: includes must stay inside it */
    char *text;          /* the config's source */
    size_t len;
    config_scan scan;
    config_chunk *chunks;
    int n_chunks;
    /* Per evaluation pass. */
    config_mem mem;
    long long steps, line_events;
    char where_src[LUA_IDSIZE]; /* last line executed, for errors that carry no position */
    int where_line;
    int include_depth;
    lua_Integer random_seed;
    int exp_line;                        /* line of the experiment call in the main file */
    int profile_line;                    /* line of the selected profile, 0 for none */
    scan_range exp_range, profile_range; /* their tables in the text, when found there */
    char *printed; /* what print() wrote in this pass, shown once the last pass is over */
    size_t printed_len, printed_cap;
    experiment *x; /* being filled by the conversion */
    int failed;    /* the conversion wrote an error into err */
} config_ctx;

/* config.c */

/* Names and keys quoted in a message may hold line breaks; an error is one line. */
void config_one_line(char *s);
/* Writes "path:line: message" into the error and marks the conversion as failed. */
int config_fail(config_ctx *c, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Line where `key` is assigned, searching from `from` (the enclosing table's line) on, then the
 * whole file; `from` (or the experiment call) when the key is not written in the text. */
int config_key_line(const config_ctx *c, const char *key, int from);
/* Line where `key` is assigned directly inside table r; as config_key_line when r is unknown or
 * does not hold it (a table built by code). */
int config_line_in(const config_ctx *c, scan_range r, const char *key, int from);
/* qsort comparator of C strings. */
int config_name_cmp(const void *a, const void *b);
/* Frees what the context owns (not the context itself). */
void config_ctx_free(config_ctx *c);

/* config_lua.c */

/* The context a state was opened for. */
config_ctx *config_lua_ctx(lua_State *L);
/* Resets the per-pass state of c and opens a Lua state bound to it (NULL when out of memory). */
lua_State *config_lua_open(config_ctx *c, lua_Integer random_seed);
/* The hook that enforces the instruction and line limits (every CONFIG_HOOK_COUNT
 * instructions and every line). */
void config_lua_hook(lua_State *L, lua_Debug *ar);
/* Message handler: gives errors that carry no position in a config file the current line. */
int config_lua_msgh(lua_State *L);
/* Protected: opens the sandbox, seeds math.random and loads the main config (returned). */
int config_lua_setup(lua_State *L);
/* Turns the Lua error on top of the stack into "path:line: message" (one line) in c->err. */
int config_lua_error(lua_State *L, config_ctx *c, int status);

/* config_get.c: the readers report a bad value through config_fail. */

/* Number of entries when the table at idx is a sequence with keys exactly 1..n, else -1. */
int config_get_sequence_length(lua_State *L, int idx);
/* Pushes field `name` of the experiment (the selected profile's value first), sets its line and
 * its key's token (-1 when not found in the text; tok may be NULL) and returns its Lua type. */
int config_get_field_at(lua_State *L, config_ctx *c, const char *name, int *line, int *tok);
/* A string field; `def` (may be NULL) when absent. */
int config_get_string(lua_State *L, config_ctx *c, const char *name, const char *def, char **out,
                      int *line);
/* A single integer field in [lo, hi]; `def` when absent. */
int config_get_integer(lua_State *L, config_ctx *c, const char *name, long long lo, long long hi,
                       long long def, long long *out, int *line);
/* A number of seconds >= 0 (timeout). */
int config_get_seconds(lua_State *L, config_ctx *c, const char *name, double *out, int *line);
/* memory_limit: GB per worker, 0 (none) or in (0, CONFIG_MAX_MEMORY_GB]; -1 when absent. */
int config_get_memory_limit(lua_State *L, config_ctx *c, double *out, int *line);
/* A string or a list of strings; `def` (may be NULL) when absent. */
int config_get_strings(lua_State *L, config_ctx *c, const char *name, const char *def, char ***out,
                       int *n, int *line);
/* An integer or a list of integers in [lo, hi] (devices). */
int config_get_ints(lua_State *L, config_ctx *c, const char *name, long long lo, long long hi,
                    int **out, int *n, int *line);
/* A plugin field: a reference or a list of them; `def` (may be NULL) names the default. */
int config_get_plugins(lua_State *L, config_ctx *c, const char *field, const char *def,
                       cfg_plugin_list *out, int *line);

/* config_convert.c */

/* Protected: converts the returned experiment (stack: 1) into c->x. */
int config_convert_experiment(lua_State *L);

#endif
