/* fuzz_driver.c — runs a fuzz target without libFuzzer: the seed corpus, then seeded mutations.
 *
 * This is fuzzing WITHOUT coverage guidance.  libFuzzer keeps every input that reaches new code
 * and mutates the kept inputs further; this driver sees no coverage, so each mutated input is
 * derived from the seed corpus alone (one to eight stacked mutations) and nothing is learned
 * from one run for the next.  It finds what random damage near the seed inputs finds, no more.
 * It is deterministic: the same corpus, --seed and --runs give the same inputs, so a failure seen
 * in CI reproduces anywhere.  Configure with -DPB_LIBFUZZER=ON (clang) for guided fuzzing.
 *
 * Mutations: bit flips, interesting bytes, byte insertions and deletions, copies inside the
 * input, splices and insertions from other corpus entries, and structure-aware mutations for
 * JSON and Lua text: duplicate, delete or swap a line; replace a number by -1, -0, NaN, 1e308,
 * huge integers and the like; delete a bracket; replace a string literal's text by an odd string
 * or by another literal of the input; duplicate a bracketed element; repeat a span.
 *
 * A failing input (signal, sanitizer report, leak, violated invariant) is written to
 * <artifact-prefix>crash-<hash> before the process dies; replay it with `--runs 0 FILE`.
 */
#include "fuzz_target.h"
#include "placebench.h"
#include "core/strmap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sanitizer runtime interface: defined only in sanitizer builds (weak, so NULL otherwise). */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
int __sanitizer_install_malloc_and_free_hooks(void (*on_malloc)(const volatile void *, size_t),
                                              void (*on_free)(const volatile void *))
    __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

#define FUZZ_MAX_STACKED 8

typedef struct fuzz_input {
    char *name;
    uint8_t *data;
    size_t len;
} fuzz_input;

typedef struct fuzz_corpus {
    fuzz_input *items;
    int n, cap;
} fuzz_corpus;

typedef struct fuzz_options {
    long long runs;
    uint64_t seed;
    size_t max_len;
    double max_time; /* seconds, 0 = no limit */
    const char *artifact_prefix;
    const char *save_slowest; /* file for the slowest input, NULL = not saved */
} fuzz_options;

/* The input being mutated: data has room for max bytes. */
typedef struct fuzz_buf {
    uint8_t *data;
    size_t len, max;
} fuzz_buf;

typedef struct fuzz_ctx {
    pb_rng rng;
    const fuzz_corpus *corpus;
    uint8_t *scratch; /* max bytes, for copies that would alias the buffer */
} fuzz_ctx;

/* What the crash handlers need.  Signal handlers and sanitizer callbacks take no argument, so
 * this one piece of state is static (test code; the library itself has none). */
static struct {
    const uint8_t *data; /* input being run, NULL when none or already saved */
    size_t len;
    char prefix[PATH_MAX];
    size_t mallocs, frees; /* counted by the sanitizer's allocation hooks */
} fuzz_current;

/* ---------------------------------------------------------------- crash handling */

static void fuzz_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

/* Async-signal-safe: writes the current input to <prefix>crash-<fnv1a hash>. */
static void fuzz_save_current(void)
{
    if (!fuzz_current.data)
        return;
    const uint8_t *data = fuzz_current.data;
    fuzz_current.data = NULL;
    unsigned long long h = strmap_fnv1a(STRMAP_FNV_BASIS, data, fuzz_current.len);
    char path[PATH_MAX + 32];
    size_t n = strlen(fuzz_current.prefix);
    memcpy(path, fuzz_current.prefix, n);
    memcpy(path + n, "crash-", 6);
    n += 6;
    for (int i = 15; i >= 0; i--)
        path[n++] = "0123456789abcdef"[(h >> (4 * i)) & 15];
    path[n] = '\0';
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        fuzz_write_all(fd, data, fuzz_current.len);
        close(fd);
    }
    static const char msg[] = "fuzz: the failing input is saved as ";
    fuzz_write_all(2, msg, sizeof msg - 1);
    fuzz_write_all(2, path, n);
    fuzz_write_all(2, fd >= 0 ? "\n" : " (could not write it)\n", fd >= 0 ? 1 : 22);
}

static void fuzz_on_signal(int sig)
{
    fuzz_save_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void fuzz_on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    fuzz_current.mallocs++;
}

static void fuzz_on_free(const volatile void *p)
{
    if (p)
        fuzz_current.frees++;
}

/* abort() (violated invariants) always; other fatal signals only when no sanitizer reports
 * them (a sanitizer calls the death callback after its report instead). */
static void fuzz_install_handlers(void)
{
    signal(SIGABRT, fuzz_on_signal);
    if (__sanitizer_set_death_callback) {
        __sanitizer_set_death_callback(fuzz_save_current);
    } else {
        signal(SIGSEGV, fuzz_on_signal);
        signal(SIGBUS, fuzz_on_signal);
        signal(SIGFPE, fuzz_on_signal);
        signal(SIGILL, fuzz_on_signal);
    }
    if (__sanitizer_install_malloc_and_free_hooks)
        __sanitizer_install_malloc_and_free_hooks(fuzz_on_malloc, fuzz_on_free);
}

/* Runs the target on one input; a run that allocated more than it freed is checked for leaks
 * (as libFuzzer does), so that a leak is pinned on the input that caused it.  Returns seconds. */
static double fuzz_run_one(const uint8_t *data, size_t len)
{
    fuzz_current.data = data;
    fuzz_current.len = len;
    size_t m0 = fuzz_current.mallocs, f0 = fuzz_current.frees;
    double t0 = pb_clock_monotonic();
    LLVMFuzzerTestOneInput(data, len);
    double dt = pb_clock_monotonic() - t0;
    if (fuzz_current.mallocs - m0 > fuzz_current.frees - f0 && __lsan_do_recoverable_leak_check &&
        __lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "fuzz: the input leaks memory (LeakSanitizer report above)\n");
        abort();
    }
    fuzz_current.data = NULL;
    return dt;
}

/* ---------------------------------------------------------------- the corpus */

/* Reads a whole file into *data (caller frees); -1 on error. */
static int fuzz_read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, got;
    *len = 0;
    *data = malloc(cap);
    while (*data && (got = fread(*data + *len, 1, cap - *len, f)) > 0) {
        *len += got;
        if (*len < cap)
            continue;
        uint8_t *grown = realloc(*data, cap * 2);
        if (!grown) {
            free(*data);
            *data = NULL;
        }
        *data = grown;
        cap *= 2;
    }
    int bad = ferror(f) || !*data;
    fclose(f);
    if (bad) {
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

static int fuzz_corpus_add(fuzz_corpus *c, const char *path)
{
    if (c->n == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 16;
        fuzz_input *items = realloc(c->items, (size_t)ncap * sizeof *items);
        if (!items) {
            fprintf(stderr, "fuzz: out of memory\n");
            return -1;
        }
        c->items = items;
        c->cap = ncap;
    }
    fuzz_input *in = &c->items[c->n];
    if (fuzz_read_file(path, &in->data, &in->len)) {
        fprintf(stderr, "fuzz: %s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    if (!(in->name = strdup(path))) {
        free(in->data);
        fprintf(stderr, "fuzz: out of memory\n");
        return -1;
    }
    c->n++;
    return 0;
}

static int fuzz_skip_entry(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* A file, or every regular file of a folder in name order (not recursive). */
static int fuzz_corpus_load(fuzz_corpus *c, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return fuzz_corpus_add(c, path);
    struct dirent **list;
    int n = scandir(path, &list, fuzz_skip_entry, alphasort), rc = 0;
    if (n < 0) {
        fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char file[PATH_MAX];
        snprintf(file, sizeof file, "%s/%s", path, list[i]->d_name);
        if (rc == 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode))
            rc = fuzz_corpus_add(c, file);
        free(list[i]);
    }
    free(list);
    return rc;
}

static void fuzz_corpus_free(fuzz_corpus *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->items[i].name);
        free(c->items[i].data);
    }
    free(c->items);
}

/* ---------------------------------------------------------------- byte-level mutations */

static size_t fuzz_below(fuzz_ctx *f, size_t n)
{
    return n ? (size_t)pb_rng_below(&f->rng, n) : 0;
}

/* Replaces b[at, at + del) by src[0, n) (src may point into b); 0 when it would not fit. */
static int fuzz_replace(fuzz_ctx *f, fuzz_buf *b, size_t at, size_t del, const uint8_t *src,
                        size_t n)
{
    if (at > b->len)
        at = b->len;
    if (del > b->len - at)
        del = b->len - at;
    if (b->len - del + n > b->max)
        return 0;
    if (n > 0)
        memcpy(f->scratch, src, n);
    memmove(b->data + at + n, b->data + at + del, b->len - at - del);
    if (n > 0)
        memcpy(b->data + at, f->scratch, n);
    b->len = b->len - del + n;
    return 1;
}

static const char fuzz_syntax_bytes[] = "{}[]()\"',:;=.-+0123456789eE#\\\n\r\t \x7f\xff";

static int fuzz_mut_flip_bit(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    b->data[fuzz_below(f, b->len)] ^= (uint8_t)(1u << fuzz_below(f, 8));
    return 1;
}

static int fuzz_mut_set_byte(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    /* sizeof includes the terminating NUL: 0 is one of the interesting bytes. */
    b->data[fuzz_below(f, b->len)] =
        (uint8_t)fuzz_syntax_bytes[fuzz_below(f, sizeof fuzz_syntax_bytes)];
    return 1;
}

static int fuzz_mut_insert_bytes(fuzz_ctx *f, fuzz_buf *b)
{
    uint8_t bytes[4];
    size_t n = 1 + fuzz_below(f, sizeof bytes);
    int syntax = fuzz_below(f, 2) == 0;
    for (size_t i = 0; i < n; i++)
        bytes[i] = syntax ? (uint8_t)fuzz_syntax_bytes[fuzz_below(f, sizeof fuzz_syntax_bytes)]
                          : (uint8_t)fuzz_below(f, 256);
    return fuzz_replace(f, b, fuzz_below(f, b->len + 1), 0, bytes, n);
}

static int fuzz_mut_delete_bytes(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t at = fuzz_below(f, b->len), n = 1 + fuzz_below(f, 32);
    return fuzz_replace(f, b, at, n, NULL, 0);
}

static int fuzz_mut_copy_within(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t from = fuzz_below(f, b->len), n = 1 + fuzz_below(f, 64);
    if (n > b->len - from)
        n = b->len - from;
    return fuzz_replace(f, b, fuzz_below(f, b->len + 1), 0, b->data + from, n);
}

static const fuzz_input *fuzz_other(fuzz_ctx *f)
{
    if (f->corpus->n == 0)
        return NULL;
    return &f->corpus->items[fuzz_below(f, (size_t)f->corpus->n)];
}

/* Crossover: a prefix of the input followed by a suffix of another corpus entry. */
static int fuzz_mut_crossover(fuzz_ctx *f, fuzz_buf *b)
{
    const fuzz_input *o = fuzz_other(f);
    if (!o)
        return 0;
    size_t at = fuzz_below(f, b->len + 1), from = fuzz_below(f, o->len + 1);
    size_t n = o->len - from;
    if (at + n > b->max)
        n = b->max - at;
    return fuzz_replace(f, b, at, b->len - at, o->data + from, n);
}

static int fuzz_mut_insert_other(fuzz_ctx *f, fuzz_buf *b)
{
    const fuzz_input *o = fuzz_other(f);
    if (!o || o->len == 0)
        return 0;
    size_t from = fuzz_below(f, o->len), n = 1 + fuzz_below(f, 256);
    if (n > o->len - from)
        n = o->len - from;
    return fuzz_replace(f, b, fuzz_below(f, b->len + 1), 0, o->data + from, n);
}

/* Repeats a short span many times: long names, many nodes, deep nesting. */
static int fuzz_mut_repeat(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t from = fuzz_below(f, b->len), n = 1 + fuzz_below(f, 64);
    if (n > b->len - from)
        n = b->len - from;
    size_t times = 2 + fuzz_below(f, 1000);
    if (n * times > b->max - b->len)
        times = (b->max - b->len) / n;
    if (times == 0)
        return 0;
    memcpy(f->scratch, b->data + from, n);
    for (size_t i = 1; i < times; i++)
        memcpy(f->scratch + i * n, f->scratch, n);
    memmove(b->data + from + n * times, b->data + from, b->len - from);
    memcpy(b->data + from, f->scratch, n * times);
    b->len += n * times;
    return 1;
}

/* ---------------------------------------------------------------- structure-aware mutations */

/* The line holding offset `at`: [*start, *end), end past its '\n' when it has one. */
static void fuzz_line_at(const fuzz_buf *b, size_t at, size_t *start, size_t *end)
{
    size_t s = at, e = at;
    while (s > 0 && b->data[s - 1] != '\n')
        s--;
    while (e < b->len && b->data[e] != '\n')
        e++;
    *start = s;
    *end = e < b->len ? e + 1 : e;
}

static int fuzz_mut_duplicate_line(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t s, e;
    fuzz_line_at(b, fuzz_below(f, b->len), &s, &e);
    return fuzz_replace(f, b, e, 0, b->data + s, e - s);
}

static int fuzz_mut_delete_line(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t s, e;
    fuzz_line_at(b, fuzz_below(f, b->len), &s, &e);
    return fuzz_replace(f, b, s, e - s, NULL, 0);
}

/* Moves one line to just before another. */
static int fuzz_mut_move_line(fuzz_ctx *f, fuzz_buf *b)
{
    if (b->len == 0)
        return 0;
    size_t s, e, t, te;
    fuzz_line_at(b, fuzz_below(f, b->len), &s, &e);
    fuzz_line_at(b, fuzz_below(f, b->len), &t, &te);
    if (t >= s && t < e)
        return 0;
    size_t n = e - s;
    uint8_t *line = malloc(n ? n : 1);
    if (!line)
        return 0;
    memcpy(line, b->data + s, n);
    fuzz_replace(f, b, s, n, NULL, 0);
    if (t > s)
        t -= n;
    int rc = fuzz_replace(f, b, t, 0, line, n);
    free(line);
    return rc;
}

static int fuzz_is_number_byte(uint8_t c)
{
    return isalnum(c) || c == '.';
}

/* Finds a number token at or after a random offset (wrapping); [*s, *e) with its '-' sign. */
static int fuzz_find_number(fuzz_ctx *f, const fuzz_buf *b, size_t *s, size_t *e)
{
    if (b->len == 0)
        return 0;
    size_t start = fuzz_below(f, b->len);
    for (size_t k = 0; k < b->len; k++) {
        size_t i = (start + k) % b->len;
        if (!isdigit(b->data[i]) || (i > 0 && (isalpha(b->data[i - 1]) || b->data[i - 1] == '_')))
            continue;
        size_t l = i, r = i;
        while (l > 0 && (isdigit(b->data[l - 1]) || b->data[l - 1] == '.'))
            l--;
        if (l > 0 && b->data[l - 1] == '-')
            l--;
        while (r < b->len && (fuzz_is_number_byte(b->data[r]) ||
                              ((b->data[r] == '-' || b->data[r] == '+') &&
                               (b->data[r - 1] == 'e' || b->data[r - 1] == 'E'))))
            r++;
        *s = l;
        *e = r;
        return 1;
    }
    return 0;
}

static const char *const fuzz_numbers[] = {
    "-1",
    "0",
    "-0",
    "1",
    "-0.0",
    "0.5",
    "NaN",
    "nan",
    "-nan",
    "Infinity",
    "1e308",
    "-1e308",
    "1e309",
    "1e-320",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "65536",
    "65537",
    "999999",
    "1000000",
    "1000001",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x7fffffffffffffff",
    "0/0",
    "1/0",
    "-1/0",
    "math.huge",
    "-math.huge",
    "math.mininteger",
    "math.maxinteger",
    "3.0",
    "1e1000",
    "2^63",
};

static int fuzz_mut_number(fuzz_ctx *f, fuzz_buf *b)
{
    size_t s, e;
    if (!fuzz_find_number(f, b, &s, &e))
        return 0;
    const char *v = fuzz_numbers[fuzz_below(f, sizeof fuzz_numbers / sizeof *fuzz_numbers)];
    return fuzz_replace(f, b, s, e - s, (const uint8_t *)v, strlen(v));
}

/* Offset of the first byte in `set` at or after a random offset (wrapping), or b->len. */
static size_t fuzz_find_byte(fuzz_ctx *f, const fuzz_buf *b, const char *set)
{
    size_t start = fuzz_below(f, b->len);
    for (size_t k = 0; k < b->len; k++) {
        size_t i = (start + k) % b->len;
        if (b->data[i] && strchr(set, b->data[i]))
            return i;
    }
    return b->len;
}

static int fuzz_mut_delete_bracket(fuzz_ctx *f, fuzz_buf *b)
{
    size_t i = fuzz_find_byte(f, b, "{}[]()");
    return i < b->len && fuzz_replace(f, b, i, 1, NULL, 0);
}

/* The text of a quoted string literal at or after a random offset: [*s, *e) between quotes. */
static int fuzz_find_string(fuzz_ctx *f, const fuzz_buf *b, size_t *s, size_t *e)
{
    size_t open = fuzz_find_byte(f, b, "\"'");
    if (open >= b->len)
        return 0;
    size_t i = open + 1;
    while (i < b->len && b->data[i] != b->data[open] && b->data[i] != '\n')
        i += b->data[i] == '\\' ? 2 : 1;
    if (i >= b->len || b->data[i] != b->data[open])
        return 0;
    *s = open + 1;
    *e = i;
    return 1;
}

static const char *const fuzz_strings[] = {
    "",       " ",          "\\n",   "a\\nb",    "\\r",  "\\u0000",   "\\0",
    "\\u{0}", "\\xff",      "\xff",  "\xc3\xa9", "\xc3", "\\\\",      "\\\"",
    "a/b",    "../x",       "/",     "%s%s%n",   "io",   "os",        "profiles",
    "random", "fake",       "quick", "in",       "join", "group",     "1",
    "-1",     "experiment", "a/x",   "placeto",  "topo", "nodes",     "links",
    "source", "target",     "port",  "id",       "cost", "out_sizes", "colocation",
};

/* Replaces a string literal's text by an odd string, a long one, or another literal's text. */
static int fuzz_mut_string(fuzz_ctx *f, fuzz_buf *b)
{
    size_t s, e, s2, e2;
    if (!fuzz_find_string(f, b, &s, &e))
        return 0;
    size_t pick = fuzz_below(f, 4);
    if (pick == 0 && fuzz_find_string(f, b, &s2, &e2))
        return fuzz_replace(f, b, s, e - s, b->data + s2, e2 - s2);
    if (pick == 1) {
        uint8_t longs[600];
        size_t n = 100 + fuzz_below(f, sizeof longs - 100);
        memset(longs, 'a' + (int)fuzz_below(f, 3), n);
        return fuzz_replace(f, b, s, e - s, longs, n);
    }
    const char *v = fuzz_strings[fuzz_below(f, sizeof fuzz_strings / sizeof *fuzz_strings)];
    return fuzz_replace(f, b, s, e - s, (const uint8_t *)v, strlen(v));
}

/* Duplicates a bracketed element ({...} or [...]) right after itself, comma-separated: a
 * duplicate node, link, option or list entry. */
static int fuzz_mut_duplicate_element(fuzz_ctx *f, fuzz_buf *b)
{
    size_t open = fuzz_find_byte(f, b, "{[");
    if (open >= b->len)
        return 0;
    uint8_t o = b->data[open], c = o == '{' ? '}' : ']';
    int depth = 0;
    size_t i = open;
    for (; i < b->len; i++) {
        if (b->data[i] == o)
            depth++;
        else if (b->data[i] == c && --depth == 0)
            break;
    }
    if (i >= b->len)
        return 0;
    size_t n = i + 1 - open;
    if (b->len + n + 2 > b->max)
        return 0;
    fuzz_replace(f, b, i + 1, 0, (const uint8_t *)", ", 2);
    return fuzz_replace(f, b, i + 3, 0, b->data + open, n);
}

typedef int (*fuzz_mutator)(fuzz_ctx *f, fuzz_buf *b);

static const fuzz_mutator fuzz_mutators[] = {
    fuzz_mut_flip_bit,
    fuzz_mut_set_byte,
    fuzz_mut_insert_bytes,
    fuzz_mut_delete_bytes,
    fuzz_mut_copy_within,
    fuzz_mut_crossover,
    fuzz_mut_insert_other,
    fuzz_mut_repeat,
    fuzz_mut_duplicate_line,
    fuzz_mut_delete_line,
    fuzz_mut_move_line,
    fuzz_mut_number,
    fuzz_mut_number,
    fuzz_mut_delete_bracket,
    fuzz_mut_string,
    fuzz_mut_string,
    fuzz_mut_duplicate_element,
};
#define FUZZ_N_MUTATORS ((int)(sizeof fuzz_mutators / sizeof fuzz_mutators[0]))

/* A corpus entry (truncated to max) with 1..FUZZ_MAX_STACKED mutations, fewer more likely. */
static void fuzz_mutate(fuzz_ctx *f, fuzz_buf *b)
{
    const fuzz_input *base = fuzz_other(f);
    b->len = 0;
    if (base) {
        b->len = base->len < b->max ? base->len : b->max;
        memcpy(b->data, base->data, b->len);
    }
    int n = 1;
    while (n < FUZZ_MAX_STACKED && fuzz_below(f, 2))
        n++;
    for (int done = 0, tries = 0; done < n && tries < 8 * n; tries++)
        done += fuzz_mutators[fuzz_below(f, FUZZ_N_MUTATORS)](f, b);
}

/* ---------------------------------------------------------------- main */

static void fuzz_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "usage: %s [--runs N] [--seed S] [--max-len BYTES] [--max-time SECONDS]\n"
            "          [--artifact-prefix PREFIX] [--save-slowest FILE] INPUT...\n"
            "Runs every INPUT (a file, or a folder of files), then N inputs made by mutating\n"
            "them with a generator seeded by S (default: 20000 runs, seed 1, max-len 65536).\n"
            "No coverage guidance: see the comment at the top of tests/fuzz/fuzz_driver.c.\n"
            "--max-time stops earlier after that many seconds.  A failing input is saved as\n"
            "PREFIX crash-<hash> (default prefix ./); --runs 0 FILE replays it.\n",
            argv0);
}

static int fuzz_parse_number(const char *s, const char *what, double lo, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo)) {
        fprintf(stderr, "fuzz: %s must be a number >= %g (got '%s')\n", what, lo, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses options; returns the index of the first INPUT, or -1 (error) or 0 (--help shown). */
static int fuzz_parse_args(int argc, char **argv, fuzz_options *o)
{
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double d = 0;
        if (strcmp(opt, "--help") == 0) {
            fuzz_usage(stdout, argv[0]);
            return 0;
        }
        if (!val) {
            fprintf(stderr, "fuzz: %s needs a value\n", opt);
            return -1;
        }
        if (strcmp(opt, "--artifact-prefix") == 0) {
            o->artifact_prefix = val;
        } else if (strcmp(opt, "--save-slowest") == 0) {
            o->save_slowest = val;
        } else if (strcmp(opt, "--runs") == 0 || strcmp(opt, "--seed") == 0 ||
                   strcmp(opt, "--max-len") == 0 || strcmp(opt, "--max-time") == 0) {
            if (fuzz_parse_number(val, opt, strcmp(opt, "--max-len") == 0 ? 1 : 0, &d))
                return -1;
            if (strcmp(opt, "--runs") == 0)
                o->runs = (long long)d;
            else if (strcmp(opt, "--seed") == 0)
                o->seed = (uint64_t)d;
            else if (strcmp(opt, "--max-len") == 0)
                o->max_len = (size_t)d;
            else
                o->max_time = d;
        } else {
            fprintf(stderr, "fuzz: unknown option '%s' (see --help)\n", opt);
            return -1;
        }
    }
    if (i >= argc) {
        fuzz_usage(stderr, argv[0]);
        return -1;
    }
    return i;
}

static void fuzz_save_file(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        fprintf(stderr, "fuzz: cannot write %s\n", path);
    if (f)
        fclose(f);
}

/* The slowest input so far, kept when --save-slowest asks for it. */
typedef struct fuzz_slowest {
    double seconds;
    long long run; /* -1 for a corpus input */
    uint8_t *data;
    size_t len;
} fuzz_slowest;

static void fuzz_note_time(fuzz_slowest *s, double dt, long long run, const fuzz_buf *b)
{
    if (dt <= s->seconds)
        return;
    s->seconds = dt;
    s->run = run;
    if (s->data) {
        memcpy(s->data, b->data, b->len);
        s->len = b->len;
    }
}

int main(int argc, char **argv)
{
    fuzz_options o = {20000, 1, 65536, 0, "./", NULL};
    int first = fuzz_parse_args(argc, argv, &o);
    if (first <= 0)
        return first == 0 ? 0 : 2;
    fuzz_corpus corpus = {0};
    for (int i = first; i < argc; i++)
        if (fuzz_corpus_load(&corpus, argv[i])) {
            fuzz_corpus_free(&corpus);
            return 2;
        }
    snprintf(fuzz_current.prefix, sizeof fuzz_current.prefix, "%s", o.artifact_prefix);
    fuzz_install_handlers();
    size_t biggest = o.max_len;
    for (int i = 0; i < corpus.n; i++)
        if (corpus.items[i].len > biggest)
            biggest = corpus.items[i].len;
    fuzz_ctx f = {.corpus = &corpus};
    pb_rng_seed(&f.rng, o.seed);
    fuzz_buf b = {malloc(biggest ? biggest : 1), 0, o.max_len};
    f.scratch = malloc(biggest ? biggest : 1);
    fuzz_slowest slow = {0, -1, o.save_slowest ? malloc(biggest ? biggest : 1) : NULL, 0};
    if (!b.data || !f.scratch || (o.save_slowest && !slow.data)) {
        fprintf(stderr, "fuzz: out of memory\n");
        return 2;
    }
    double t0 = pb_clock_monotonic();
    for (int i = 0; i < corpus.n; i++) {
        memcpy(b.data, corpus.items[i].data, corpus.items[i].len);
        b.len = corpus.items[i].len;
        fuzz_note_time(&slow, fuzz_run_one(b.data, b.len), -1, &b);
    }
    long long run = 0;
    for (; run < o.runs; run++) {
        if (o.max_time > 0 && (run & 63) == 0 && pb_clock_monotonic() - t0 > o.max_time)
            break;
        fuzz_mutate(&f, &b);
        fuzz_note_time(&slow, fuzz_run_one(b.data, b.len), run, &b);
    }
    double elapsed = pb_clock_monotonic() - t0;
    char which[64] = "a corpus input";
    if (slow.run >= 0)
        snprintf(which, sizeof which, "mutated input %lld", slow.run);
    printf("fuzz: %d corpus inputs and %lld mutated inputs (seed %llu) in %.2f s, %.0f inputs/s; "
           "slowest: %s, %.1f ms\n",
           corpus.n, run, (unsigned long long)o.seed, elapsed,
           elapsed > 0 ? (double)(corpus.n + run) / elapsed : 0.0, which, slow.seconds * 1e3);
    if (o.save_slowest)
        fuzz_save_file(o.save_slowest, slow.data, slow.len);
    free(slow.data);
    free(b.data);
    free(f.scratch);
    fuzz_corpus_free(&corpus);
    return 0;
}
