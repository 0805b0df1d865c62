/* options.h — typed plugin options: resolving key/value text against an option table, help. */
#ifndef PB_OPTIONS_H
#define PB_OPTIONS_H

#include "placebench.h"

#include <stdio.h>

typedef struct option_kv {
    const char *key;
    const char *value; /* text form, as given */
} option_kv;

/* Resolved values of one plugin's options; `values` is parallel to desc->options. */
typedef struct option_set {
    pb_value *values;
    char **texts; /* owned text of each value */
    int n;
    /* The plugin's options struct (desc->options_struct_size bytes) filled through the table's
     * offsets; NULL when the plugin declares none. */
    void *object;
} option_set;

/*
 * Resolves the given key/value pairs against d's option table: defaults for keys not given,
 * type and range checks, unknown keys rejected with a did-you-mean.  `where` prefixes errors
 * (e.g. "configs/x.lua:12: placer 'random'").  On success `out` is caller-owned
 * (option_set_free).
 */
int options_resolve(const pb_plugin_desc *d, const option_kv *kv, int n, const char *where,
                    option_set *out, pb_error *err);
void option_set_free(option_set *s);

/* The create() arguments of a plugin resolved into s (s may be NULL: no options): values, their
 * element size and the options struct, borrowed from s. */
pb_create_args options_create_args(const option_set *s, const pb_host *host, uint64_t seed);

/* Checks the options struct layout of d (every option's offset and size inside
 * options_struct_size, aligned, no two overlapping). */
int options_check_layout(const pb_plugin_desc *d, pb_error *err);
/* More on options_resolve: an option whose default_value is NULL is required (leaving it out is
 * an error).  When `where` already names the plugin ("...: placer 'random'") messages do not
 * repeat it; otherwise they say "... of placer 'random'".  Messages are one line. */

/* The closest of `candidates` to `word` by edit distance, or NULL when none is close. */
const char *options_did_you_mean(const char *word, const char *const *candidates, int n);

/* Prints the plugin's description and option table (name, type, default, range, help). */
void options_print_help(FILE *f, const pb_plugin_desc *d);

/* Writes the shortest decimal text (at most 17 significant digits, "%g" style) that reads back
 * as exactly d: 0.001 -> "0.001", 50.0 -> "50".  This is the text form of numbers given in
 * configs.  n >= 32 is always enough. */
void options_format_double(double d, char *buf, size_t n);

#endif
