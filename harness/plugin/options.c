/* options.c — typed plugin options: parsing text values against an option table, did-you-mean,
 * help tables. */
#include "options.h"

#include "loader.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void options_format_double(double d, char *buf, size_t n)
{
    /* The first precision that reads back exactly is the shortest faithful text; numbers below
     * 1e17 are written without an exponent when "%g" allows it ("50", not "5e+01"). */
    int plain = isfinite(d) && fabs(d) < 1e17 && (d == 0 || fabs(d) >= 1e-4);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d && (!plain || !strchr(buf, 'e')))
            return;
    }
}

/* Edit distance (insert, delete, substitute) of a and b; both shorter than 256 bytes. */
static int options_levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[256];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *options_did_you_mean(const char *word, const char *const *candidates, int n)
{
    size_t len = strlen(word);
    int limit = (int)(len / 3) > 2 ? (int)(len / 3) : 2;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n && len < 256; i++) {
        if (!candidates[i] || strlen(candidates[i]) >= 256)
            continue;
        int d = options_levenshtein(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

/* Numbers in messages: integers without exponent, others in their shortest form. */
static void options_format_number(double d, char *buf, size_t n)
{
    if (d == floor(d) && fabs(d) < 1e15)
        snprintf(buf, n, "%.0f", d);
    else
        options_format_double(d, buf, n);
}

/* Describes the accepted range of a numeric option: "in [1, 1000]", ">= 1", "<= 5" or "". */
static void options_range_text(const pb_option_def *o, char *buf, size_t n)
{
    buf[0] = '\0';
    if (o->min > o->max)
        return;
    char lo[40], hi[40];
    options_format_number(o->min, lo, sizeof lo);
    options_format_number(o->max, hi, sizeof hi);
    int has_lo = o->min > -1e300, has_hi = o->max < 1e300;
    if (has_lo && has_hi)
        snprintf(buf, n, "[%s, %s]", lo, hi);
    else if (has_lo)
        snprintf(buf, n, ">= %s", lo);
    else if (has_hi)
        snprintf(buf, n, "<= %s", hi);
}

static const char *options_type_name(int type)
{
    switch (type) {
    case PB_OPT_INT:
        return "int";
    case PB_OPT_DOUBLE:
        return "double";
    case PB_OPT_BOOL:
        return "bool";
    case PB_OPT_STRING:
        return "string";
    case PB_OPT_ENUM:
        return "enum";
    }
    return "?";
}

/* Index of `word` among the '|'-separated choices, or -1. */
static int options_choice_index(const char *choices, const char *word)
{
    size_t wl = strlen(word);
    int index = 0;
    for (const char *p = choices ? choices : ""; *p; index++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wl && strncmp(p, word, wl) == 0)
            return index;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* The error prefix naming the option; `where` may already name the plugin (plan.c passes
 * "file:line: placer 'random'"), in which case it is not named twice. */
static void options_subject(const pb_plugin_desc *d, const char *where, const char *opt, char *buf,
                            size_t n)
{
    char quoted[300];
    snprintf(quoted, sizeof quoted, "'%s'", d->name);
    const char *kind = loader_kind_name(d->kind);
    if (where && strstr(where, quoted))
        snprintf(buf, n, "%s: option '%s'", where, opt);
    else
        snprintf(buf, n, "%s%soption '%s' of %s '%s'", where ? where : "", where ? ": " : "", opt,
                 kind ? kind : "plugin", d->name);
}

static int options_parse_int(const pb_option_def *o, const char *text, const char *subject,
                             pb_value *v, pb_error *err)
{
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || isspace((unsigned char)text[0]))
        return pb_errorf(err, "%s must be an integer, not '%s'", subject, text);
    char range[100];
    options_range_text(o, range, sizeof range);
    if (o->min <= o->max && ((double)x < o->min || (double)x > o->max))
        return pb_errorf(err, "%s is %lld, out of range (must be %s%s)", subject, x,
                         range[0] == '[' ? "in " : "", range);
    v->i = x;
    v->d = (double)x;
    return PB_OK;
}

static int options_parse_double(const pb_option_def *o, const char *text, const char *subject,
                                pb_value *v, pb_error *err)
{
    char *end;
    double x = strtod(text, &end);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return pb_errorf(err, "%s must be a number, not '%s'", subject, text);
    if (!isfinite(x))
        return pb_errorf(err, "%s must be a finite number, not '%s'", subject, text);
    char range[100];
    options_range_text(o, range, sizeof range);
    if (o->min <= o->max && (x < o->min || x > o->max))
        return pb_errorf(err, "%s is %s, out of range (must be %s%s)", subject, text,
                         range[0] == '[' ? "in " : "", range);
    v->d = x;
    v->i = 0;
    return PB_OK;
}

/* Parses `text` as a value of option o into v (v->s is set by the caller). */
static int options_parse(const pb_option_def *o, const char *text, const char *subject, pb_value *v,
                         pb_error *err)
{
    switch (o->type) {
    case PB_OPT_INT:
        return options_parse_int(o, text, subject, v, err);
    case PB_OPT_DOUBLE:
        return options_parse_double(o, text, subject, v, err);
    case PB_OPT_BOOL:
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
            v->i = 1;
        else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
            v->i = 0;
        else
            return pb_errorf(err, "%s must be true or false, not '%s'", subject, text);
        v->d = (double)v->i;
        return PB_OK;
    case PB_OPT_STRING:
        return PB_OK;
    case PB_OPT_ENUM:
        v->i = options_choice_index(o->choices, text);
        if (v->i < 0)
            return pb_errorf(err, "%s is '%s', must be one of %s", subject, text,
                             o->choices ? o->choices : "(no choices)");
        return PB_OK;
    }
    return pb_errorf(err, "%s has an unknown type %d", subject, o->type);
}

/* The error for a key that the option table lacks, with a suggestion or the list of options. */
static int options_unknown(const pb_plugin_desc *d, const char *key, const char *where,
                           pb_error *err)
{
    const char *kind = loader_kind_name(d->kind);
    char head[700], quoted[300];
    snprintf(quoted, sizeof quoted, "'%s'", d->name);
    if (where && strstr(where, quoted))
        snprintf(head, sizeof head, "%s: unknown option '%s'", where, key);
    else
        snprintf(head, sizeof head, "%s%sunknown option '%s' of %s '%s'", where ? where : "",
                 where ? ": " : "", key, kind ? kind : "plugin", d->name);
    if (d->n_options == 0)
        return pb_errorf(err, "%s (it takes no options)", head);
    const char **names = malloc((size_t)d->n_options * sizeof *names);
    if (!names)
        return pb_errorf(err, "%s", head);
    for (int i = 0; i < d->n_options; i++)
        names[i] = d->options[i].name;
    const char *close = options_did_you_mean(key, names, d->n_options);
    if (close) {
        free(names);
        return pb_errorf(err, "%s (did you mean '%s'?)", head, close);
    }
    char list[400] = "";
    size_t used = 0;
    for (int i = 0; i < d->n_options && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    free(names);
    return pb_errorf(err, "%s (options: %s)", head, list);
}

/* Index in kv of the value given for option `name`, or -1. */
static int options_given(const option_kv *kv, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(kv[i].key, name) == 0)
            return i;
    return -1;
}

/* Every given key must name an option, once. */
static int options_check_keys(const pb_plugin_desc *d, const option_kv *kv, int n,
                              const char *where, pb_error *err)
{
    for (int i = 0; i < n; i++) {
        int known = 0;
        for (int k = 0; k < d->n_options && !known; k++)
            known = strcmp(d->options[k].name, kv[i].key) == 0;
        if (!known)
            return options_unknown(d, kv[i].key, where, err);
        if (options_given(kv, i, kv[i].key) >= 0) {
            char subject[800];
            options_subject(d, where, kv[i].key, subject, sizeof subject);
            return pb_errorf(err, "%s is given twice", subject);
        }
    }
    return PB_OK;
}

/* The C type an option takes in a plugin's options struct: its size and alignment. */
static size_t options_c_size(int type)
{
    switch (type) {
    case PB_OPT_INT:
        return sizeof(long long);
    case PB_OPT_DOUBLE:
        return sizeof(double);
    case PB_OPT_STRING:
        return sizeof(const char *);
    default: /* BOOL, ENUM */
        return sizeof(int);
    }
}

/* Writes v at o->offset of the options struct, in the C type of o->type. */
static void options_store(const pb_option_def *o, const pb_value *v, void *object)
{
    char *at = (char *)object + o->offset;
    long long i = v->i;
    double d = v->d;
    int small = (int)v->i;
    switch (o->type) {
    case PB_OPT_INT:
        memcpy(at, &i, sizeof i);
        break;
    case PB_OPT_DOUBLE:
        memcpy(at, &d, sizeof d);
        break;
    case PB_OPT_STRING:
        memcpy(at, &v->s, sizeof v->s);
        break;
    default:
        memcpy(at, &small, sizeof small);
        break;
    }
}

int options_check_layout(const pb_plugin_desc *d, pb_error *err)
{
    size_t total = d->options_struct_size;
    if (total == 0)
        return PB_OK;
    for (int k = 0; k < d->n_options; k++) {
        const pb_option_def *o = &d->options[k];
        size_t size = options_c_size(o->type);
        if (o->offset % size != 0 || o->offset + size > total)
            return pb_errorf(err,
                             "option '%s' lies at offset %zu (%zu bytes), outside or misaligned "
                             "in its %zu-byte options struct",
                             o->name, o->offset, size, total);
        for (int j = 0; j < k; j++) {
            const pb_option_def *p = &d->options[j];
            size_t psize = options_c_size(p->type);
            if (o->offset < p->offset + psize && p->offset < o->offset + size)
                return pb_errorf(err, "options '%s' and '%s' overlap in the options struct",
                                 p->name, o->name);
        }
    }
    return PB_OK;
}

/* Resolves option k of d from the given value or its default. */
static int options_resolve_one(const pb_plugin_desc *d, int k, const option_kv *kv, int n,
                               const char *where, option_set *out, pb_error *err)
{
    const pb_option_def *o = &d->options[k];
    char subject[800];
    options_subject(d, where, o->name, subject, sizeof subject);
    int g = options_given(kv, n, o->name);
    const char *text = g >= 0 ? kv[g].value : o->default_value;
    if (!text)
        return pb_errorf(err, "%s has no default and must be given", subject);
    if (g < 0) {
        /* A bad default is the plugin's fault; say so. */
        size_t len = strlen(subject);
        snprintf(subject + len, sizeof subject - len, " (default of the plugin)");
    }
    out->texts[k] = strdup(text);
    if (!out->texts[k])
        return pb_errorf(err, "out of memory");
    pb_value *v = &out->values[k];
    memset(v, 0, sizeof *v);
    v->s = out->texts[k];
    return options_parse(o, text, subject, v, err);
}

int options_resolve(const pb_plugin_desc *d, const option_kv *kv, int n, const char *where,
                    option_set *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    if (options_check_keys(d, kv, n, where, err))
        return PB_ERR;
    int count = d->n_options;
    out->values = calloc((size_t)(count ? count : 1), sizeof *out->values);
    out->texts = calloc((size_t)(count ? count : 1), sizeof *out->texts);
    out->n = count;
    if (!out->values || !out->texts) {
        option_set_free(out);
        return pb_errorf(err, "out of memory");
    }
    for (int k = 0; k < count; k++)
        if (options_resolve_one(d, k, kv, n, where, out, err)) {
            option_set_free(out);
            return PB_ERR;
        }
    if (d->options_struct_size > 0) {
        out->object = calloc(1, d->options_struct_size);
        if (!out->object) {
            option_set_free(out);
            return pb_errorf(err, "out of memory");
        }
        for (int k = 0; k < count; k++)
            options_store(&d->options[k], &out->values[k], out->object);
    }
    return PB_OK;
}

pb_create_args options_create_args(const option_set *s, const pb_host *host, uint64_t seed)
{
    return (pb_create_args){.struct_size = sizeof(pb_create_args),
                            .opts = s ? s->values : NULL,
                            .host = host,
                            .seed = seed,
                            .value_size = sizeof(pb_value),
                            .options = s ? s->object : NULL};
}

void option_set_free(option_set *s)
{
    if (!s)
        return;
    for (int k = 0; s->texts && k < s->n; k++)
        free(s->texts[k]);
    free(s->texts);
    free(s->values);
    free(s->object);
    memset(s, 0, sizeof *s);
}

/* The "range / choices" column of the help table. */
static void options_accepts_text(const pb_option_def *o, char *buf, size_t n)
{
    if (o->type == PB_OPT_ENUM)
        snprintf(buf, n, "%s", o->choices ? o->choices : "");
    else if (o->type == PB_OPT_BOOL)
        snprintf(buf, n, "true|false");
    else if (o->type == PB_OPT_INT || o->type == PB_OPT_DOUBLE)
        options_range_text(o, buf, n);
    else
        buf[0] = '\0';
    if (!buf[0])
        snprintf(buf, n, "-");
}

static int options_width(int current, const char *s)
{
    int len = (int)strlen(s);
    return len > current ? len : current;
}

void options_print_help(FILE *f, const pb_plugin_desc *d)
{
    const char *kind = loader_kind_name(d->kind);
    fprintf(f, "%s %s %s: %s\n", kind ? kind : "plugin", d->name, d->version ? d->version : "",
            d->description ? d->description : "");
    if (d->n_options == 0) {
        fputs("no options\n", f);
        return;
    }
    int wn = 6, wt = 4, wd = 7, wa = 15;
    char accepts[200];
    for (int k = 0; k < d->n_options; k++) {
        const pb_option_def *o = &d->options[k];
        options_accepts_text(o, accepts, sizeof accepts);
        wn = options_width(wn, o->name);
        wt = options_width(wt, options_type_name(o->type));
        wd = options_width(wd, o->default_value ? o->default_value : "(required)");
        wa = options_width(wa, accepts);
    }
    fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s\n", wn, "option", wt, "type", wd, "default", wa,
            "range / choices", "help");
    for (int k = 0; k < d->n_options; k++) {
        const pb_option_def *o = &d->options[k];
        options_accepts_text(o, accepts, sizeof accepts);
        fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s\n", wn, o->name, wt, options_type_name(o->type),
                wd, o->default_value ? o->default_value : "(required)", wa, accepts,
                o->help ? o->help : "");
    }
}
