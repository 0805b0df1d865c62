/* config_scan.c — where things are written in a config's text: a small Lua tokenizer that
 * locates assignments, plugin names and tables for errors found after evaluation. */
#include "config_internal.h"

#include "core/array.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int config_scan_push(config_scan *s, int kind, int line, const char *text, size_t len)
{
    if (array_grow(&s->tok, &s->cap, s->n + 1, sizeof *s->tok))
        return PB_ERR;
    s->tok[s->n++] = (scan_token){kind, line, text, len};
    return PB_OK;
}

/* Length of the line break at s[i], 0 when none starts there: Lua counts "\n", "\r", "\r\n" and
 * "\n\r" as one line break each (llex.c, inclinenumber). */
static size_t config_scan_newline(const char *s, size_t len, size_t i)
{
    if (s[i] != '\n' && s[i] != '\r')
        return 0;
    return i + 1 < len && (s[i + 1] == '\n' || s[i + 1] == '\r') && s[i + 1] != s[i] ? 2 : 1;
}

/* Level of the long bracket opening at s[i] ("[[" is 0, "[==[" is 2), or -1 when none does. */
static int config_scan_long_open(const char *s, size_t len, size_t i)
{
    if (i >= len || s[i] != '[')
        return -1;
    size_t j = i + 1;
    int level = 0;
    while (j < len && s[j] == '=') {
        level++;
        j++;
    }
    return j < len && s[j] == '[' ? level : -1;
}

/* Skips the long bracket of `level` opening at s[*i], counting lines; *body spans its text. */
static void config_scan_long_skip(const char *s, size_t len, size_t *i, int level, int *line,
                                  size_t *body, size_t *body_len)
{
    size_t j = *i + (size_t)level + 2;
    *body = j;
    while (j < len) {
        if (s[j] == ']') {
            size_t k = j + 1;
            int eq = 0;
            while (k < len && s[k] == '=') {
                eq++;
                k++;
            }
            if (eq == level && k < len && s[k] == ']') {
                *body_len = j - *body;
                *i = k + 1;
                return;
            }
        }
        size_t nl = config_scan_newline(s, len, j);
        *line += nl > 0;
        j += nl ? nl : 1;
    }
    *body_len = j - *body;
    *i = len;
}

/* Skips the quoted string opening at s[*i]; *body spans its raw text. */
static void config_scan_quoted(const char *s, size_t len, size_t *i, int *line, size_t *body,
                               size_t *body_len)
{
    char q = s[*i];
    size_t j = *i + 1;
    *body = j;
    while (j < len && s[j] != q && s[j] != '\n' && s[j] != '\r') {
        if (s[j] != '\\' || j + 1 >= len) {
            j++;
            continue;
        }
        size_t nl = config_scan_newline(s, len, j + 1); /* an escaped line break is in the string */
        *line += nl > 0;
        j += 1 + (nl ? nl : 1);
    }
    *body_len = j - *body;
    *i = j < len && s[j] == q ? j + 1 : j; /* an unterminated string is Lua's error to report */
}

static size_t config_scan_number_end(const char *s, size_t len, size_t j)
{
    while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '.' ||
                       ((s[j] == '+' || s[j] == '-') && strchr("eEpP", s[j - 1]))))
        j++;
    return j;
}

/* Reads one token (or comment) at s[*i]; returns PB_ERR only when out of memory. */
static int config_scan_token(const char *s, size_t len, size_t *i, int *line, config_scan *out)
{
    size_t at = *i, body, body_len;
    char c = s[at], next = at + 1 < len ? s[at + 1] : '\0';
    int start = *line;
    if (c == '-' && next == '-') {
        int level = config_scan_long_open(s, len, at + 2);
        *i = at + 2;
        if (level >= 0)
            config_scan_long_skip(s, len, i, level, line, &body, &body_len);
        else
            while (*i < len && s[*i] != '\n' && s[*i] != '\r')
                (*i)++;
        return PB_OK;
    }
    int level = config_scan_long_open(s, len, at);
    if (level >= 0 || c == '"' || c == '\'') {
        if (level >= 0)
            config_scan_long_skip(s, len, i, level, line, &body, &body_len);
        else
            config_scan_quoted(s, len, i, line, &body, &body_len);
        return config_scan_push(out, SCAN_STRING, start, s + body, body_len);
    }
    size_t end = at + 1;
    int kind = SCAN_OTHER;
    if (isalpha((unsigned char)c) || c == '_') {
        while (end < len && (isalnum((unsigned char)s[end]) || s[end] == '_'))
            end++;
        kind = SCAN_NAME;
    } else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)next))) {
        end = config_scan_number_end(s, len, at);
    } else if (strchr("=<>~", c) && next == '=') {
        end = at + 2;
    } else if (c == '=') {
        kind = SCAN_ASSIGN;
    }
    *i = end;
    return config_scan_push(out, kind, start, s + at, end - at);
}

int config_scan_source(const char *s, size_t len, config_scan *out)
{
    size_t i = 0;
    int line = 1;
    if (len > 0 && s[0] == '#') /* Lua skips a first line starting with '#' */
        while (i < len && s[i] != '\n' && s[i] != '\r')
            i++;
    while (i < len) {
        size_t nl = config_scan_newline(s, len, i);
        if (nl) {
            line++;
            i += nl;
        } else if (isspace((unsigned char)s[i])) {
            i++;
        } else if (config_scan_token(s, len, &i, &line, out)) {
            return PB_ERR;
        }
    }
    return PB_OK;
}

int config_scan_is(const scan_token *t, int kind, const char *text)
{
    return t->kind == kind && t->len == strlen(text) && memcmp(t->text, text, t->len) == 0;
}

/* Whether token k starts an assignment to `key`: `key =` (not `local key =`) or `["key"] =`. */
static int config_scan_assigns(const config_scan *s, int k, const char *key)
{
    const scan_token *t = s->tok;
    if (config_scan_is(&t[k], SCAN_NAME, key))
        return k + 1 < s->n && t[k + 1].kind == SCAN_ASSIGN &&
               !(k > 0 && config_scan_is(&t[k - 1], SCAN_NAME, "local"));
    return config_scan_is(&t[k], SCAN_STRING, key) && k > 0 && k + 2 < s->n &&
           config_scan_is(&t[k - 1], SCAN_OTHER, "[") &&
           config_scan_is(&t[k + 1], SCAN_OTHER, "]") && t[k + 2].kind == SCAN_ASSIGN;
}

/* First line >= from where `key` is assigned, or 0. */
int config_scan_key_line(const config_scan *s, const char *key, int from)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line >= from && config_scan_assigns(s, k, key))
            return s->tok[k].line;
    return 0;
}

/* First line >= from holding the string literal `text`, or 0. */
int config_scan_string_line(const config_scan *s, const char *text, int from)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line >= from && config_scan_is(&s->tok[k], SCAN_STRING, text))
            return s->tok[k].line;
    return 0;
}

/* Line of the last `return`, where a config that returns the wrong thing is wrong; 1 if none. */
int config_scan_return_line(const config_scan *s)
{
    int line = 1;
    for (int k = 0; k < s->n; k++)
        if (config_scan_is(&s->tok[k], SCAN_NAME, "return"))
            line = s->tok[k].line;
    return line;
}

const scan_range config_scan_no_range = {-1, -1};

/* The table whose '{' is token `open`, up to its matching '}'. */
scan_range config_scan_table(const config_scan *s, int open)
{
    int depth = 0;
    for (int k = open; k < s->n; k++) {
        if (config_scan_is(&s->tok[k], SCAN_OTHER, "{"))
            depth++;
        else if (config_scan_is(&s->tok[k], SCAN_OTHER, "}") && --depth == 0)
            return (scan_range){open, k};
    }
    return (scan_range){open, s->n}; /* unterminated: Lua has reported it already */
}

/* The table constructor that token k introduces: `k = {`, `k {` or `k ({`. */
scan_range config_scan_table_after(const config_scan *s, int k)
{
    if (k < 0)
        return config_scan_no_range;
    int j = k + 1;
    if (j < s->n && s->tok[j].kind == SCAN_ASSIGN)
        j++;
    if (j < s->n && config_scan_is(&s->tok[j], SCAN_OTHER, "("))
        j++;
    if (j < s->n && config_scan_is(&s->tok[j], SCAN_OTHER, "{"))
        return config_scan_table(s, j);
    return config_scan_no_range;
}

/* Token index of the assignment to `key` directly inside r (not in a nested table), or -1. */
int config_scan_find_key(const config_scan *s, scan_range r, const char *key)
{
    int depth = 0;
    for (int k = r.open + 1; r.open >= 0 && k < r.close; k++) {
        if (config_scan_is(&s->tok[k], SCAN_OTHER, "{"))
            depth++;
        else if (config_scan_is(&s->tok[k], SCAN_OTHER, "}"))
            depth--;
        else if (depth == 0 && config_scan_assigns(s, k, key))
            return k;
    }
    return -1;
}

/* Token index of the string literal `text` inside r after token `after`, or -1. */
int config_scan_find_string(const config_scan *s, scan_range r, int after, const char *text)
{
    int k = after > r.open ? after + 1 : r.open + 1;
    for (; r.open >= 0 && k < r.close; k++)
        if (config_scan_is(&s->tok[k], SCAN_STRING, text))
            return k;
    return -1;
}

/* The table of the `experiment { ... }` call written on `line`. */
scan_range config_scan_experiment(const config_scan *s, int line)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line == line && config_scan_is(&s->tok[k], SCAN_NAME, "experiment"))
            return config_scan_table_after(s, k);
    return config_scan_no_range;
}
