/* loader.c — plugin discovery and loading through libltdl, with ABI and ops validation. */
#include "loader.h"

#include <stddef.h>

#include "core/array.h"
#include "core/clock.h"
#include "core/fileio.h"
#include "options.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ltdl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A probe that has not answered after this long (a constructor that hangs) is killed. */
#define LOADER_PROBE_TIMEOUT_MS 10000

typedef struct loader_module {
    lt_dlhandle handle;
    char *path;
    pb_plugin_desc *normalised; /* owned copy of an older descriptor, or NULL */
} loader_module;

typedef struct loader_rejected {
    char *path;
    char *why;
} loader_rejected;

/* A module that passed the probe: what it says it is, before it is loaded here. */
typedef struct loader_candidate {
    char *path;
    int kind;
    char *name;
} loader_candidate;

struct loader {
    char **dirs;
    int n_dirs;
    loader_module *modules;
    int n_modules, cap_modules;
    loader_entry **entries; /* individually allocated: pointers handed out stay valid */
    int n_entries, cap_entries;
    loader_entry *listing; /* sorted copy returned by loader_list */
    loader_rejected *rejected;
    int n_rejected, cap_rejected;
    loader_candidate *candidates;
    int n_candidates, cap_candidates;
    int scanned, listed;
};

static const char *const loader_kind_names[] = {NULL, "traversal", "simulator", "embedding",
                                                "placer"};

const char *loader_kind_name(int kind)
{
    return kind >= PB_KIND_TRAVERSAL && kind <= PB_KIND_PLACER ? loader_kind_names[kind] : NULL;
}

int loader_kind_from_name(const char *word)
{
    for (int k = PB_KIND_TRAVERSAL; k <= PB_KIND_PLACER; k++)
        if (strcmp(word, loader_kind_names[k]) == 0)
            return k;
    return 0;
}

static int loader_add_dir(loader *l, const char *dir)
{
    if (!dir || !*dir)
        return 0;
    for (int i = 0; i < l->n_dirs; i++)
        if (strcmp(l->dirs[i], dir) == 0)
            return 0;
    char **nd = realloc(l->dirs, (size_t)(l->n_dirs + 1) * sizeof(char *));
    if (!nd)
        return -1;
    l->dirs = nd;
    l->dirs[l->n_dirs] = strdup(dir);
    return l->dirs[l->n_dirs++] ? 0 : -1;
}

/* The folder of the running executable. */
static int loader_exe_dir(char *buf, size_t n)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(buf, n, "%s", exe);
    return 0;
}

loader *loader_new(const char *const *extra, int n_extra, pb_error *err)
{
    if (lt_dlinit() != 0)
        return pb_errorf(err, "libltdl: %s", lt_dlerror()), NULL;
    loader *l = calloc(1, sizeof *l);
    if (!l) {
        lt_dlexit();
        return pb_errorf(err, "out of memory"), NULL;
    }
    int rc = 0;
    for (int i = 0; i < n_extra; i++)
        rc |= loader_add_dir(l, extra[i]);
    const char *env = getenv("PLACEBENCH_PLUGIN_PATH");
    if (env) {
        char *copy = strdup(env), *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok;
             tok = strtok_r(NULL, ":", &save))
            rc |= loader_add_dir(l, tok);
        free(copy);
    }
    /* Beside the executable: the build tree's plugins/ folder, then the installed layout
     * relative to bin/ (so an install moved to another prefix still finds its plugins). */
    char exe[4096], dir[4400];
    if (loader_exe_dir(exe, sizeof exe) == 0) {
        snprintf(dir, sizeof dir, "%s/plugins", exe);
        rc |= loader_add_dir(l, dir);
        snprintf(dir, sizeof dir, "%s/../%s", exe, PB_PLUGIN_RELATIVE_DIR);
        rc |= loader_add_dir(l, dir);
    }
    rc |= loader_add_dir(l, PB_PLUGIN_INSTALL_DIR);
    if (rc) {
        loader_free(l);
        return pb_errorf(err, "out of memory"), NULL;
    }
    return l;
}

void loader_free(loader *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n_modules; i++) {
        lt_dlclose(l->modules[i].handle);
        free(l->modules[i].path);
        free(l->modules[i].normalised);
    }
    for (int i = 0; i < l->n_rejected; i++) {
        free(l->rejected[i].path);
        free(l->rejected[i].why);
    }
    for (int i = 0; i < l->n_candidates; i++) {
        free(l->candidates[i].path);
        free(l->candidates[i].name);
    }
    free(l->candidates);
    for (int i = 0; i < l->n_dirs; i++)
        free(l->dirs[i]);
    free(l->dirs);
    for (int i = 0; i < l->n_entries; i++)
        free(l->entries[i]);
    free(l->modules);
    free(l->entries);
    free(l->listing);
    free(l->rejected);
    free(l);
    lt_dlexit();
}

/* The minimum ops-table size and the operations every plugin of a kind must provide. */
static int loader_check_ops(const pb_plugin_desc *d, pb_error *err)
{
    if (!d->ops)
        return pb_errorf(err, "has no operations table");
    size_t size = *(const size_t *)d->ops;
    const char *missing = NULL;
    size_t need = 0;
    switch (d->kind) {
    case PB_KIND_TRAVERSAL: {
        const pb_traversal_ops *o = d->ops;
        need = offsetof(pb_traversal_ops, order) + sizeof o->order;
        if (size >= need)
            missing = !o->create ? "create" : !o->destroy ? "destroy" : !o->order ? "order" : NULL;
        break;
    }
    case PB_KIND_SIMULATOR: {
        const pb_simulator_ops *o = d->ops;
        need = offsetof(pb_simulator_ops, evaluate) + sizeof o->evaluate;
        if (size >= need)
            missing = !o->create     ? "create"
                      : !o->destroy  ? "destroy"
                      : !o->prepare  ? "prepare"
                      : !o->release  ? "release"
                      : !o->evaluate ? "evaluate"
                                     : NULL;
        break;
    }
    case PB_KIND_EMBEDDING: {
        const pb_embedding_ops *o = d->ops;
        need = offsetof(pb_embedding_ops, forward) + sizeof o->forward;
        if (size >= need)
            missing = !o->create        ? "create"
                      : !o->destroy     ? "destroy"
                      : !o->init_params ? "init_params"
                      : !o->forward     ? "forward"
                                        : NULL;
        break;
    }
    case PB_KIND_PLACER: {
        const pb_placer_ops *o = d->ops;
        need = offsetof(pb_placer_ops, place) + sizeof o->place;
        if (size >= need)
            missing = !o->create ? "create" : !o->destroy ? "destroy" : !o->place ? "place" : NULL;
        break;
    }
    default:
        return pb_errorf(err, "has unknown plugin kind %d", d->kind);
    }
    if (size < need)
        return pb_errorf(err, "has a %s operations table of %zu bytes, ABI %d.%d needs %zu",
                         loader_kind_name(d->kind), size, PB_ABI_MAJOR, PB_ABI_MINOR, need);
    if (missing)
        return pb_errorf(err,
                         "%s '%s' lacks the required operation '%s' (plugin ABI %u.%u, "
                         "placebench ABI %d.%d)",
                         loader_kind_name(d->kind), d->name, missing, d->abi_major, d->abi_minor,
                         PB_ABI_MAJOR, PB_ABI_MINOR);
    return PB_OK;
}

static int loader_check_desc(const pb_plugin_desc *d, pb_error *err)
{
    if (d->abi_major != PB_ABI_MAJOR)
        return pb_errorf(err, "was built for plugin ABI %u.%u; this placebench has ABI %d.%d",
                         d->abi_major, d->abi_minor, PB_ABI_MAJOR, PB_ABI_MINOR);
    if (d->struct_size < offsetof(pb_plugin_desc, ops) + sizeof d->ops)
        return pb_errorf(err, "has a descriptor of %zu bytes (ABI %u.%u), too small for ABI %d.%d",
                         d->struct_size, d->abi_major, d->abi_minor, PB_ABI_MAJOR, PB_ABI_MINOR);
    if (!d->name || !*d->name || !d->version)
        return pb_errorf(err, "has no name or version");
    if (d->n_options < 0 || (d->n_options > 0 && !d->options))
        return pb_errorf(err, "'%s' has a malformed option table", d->name);
    return loader_check_ops(d, err);
}

/* The element size of d's option table: option_size since ABI 1.2, the 1.1 pb_option_def
 * (everything before `offset`) for older descriptors. */
static size_t loader_option_size(const pb_plugin_desc *d)
{
    if (d->struct_size >= offsetof(pb_plugin_desc, option_size) + sizeof d->option_size)
        return d->option_size;
    return offsetof(pb_option_def, offset);
}

/* A descriptor whose struct or option elements are smaller than this harness's (an older ABI
 * minor) is copied into the current layout, missing members zero, so that the rest of the
 * harness reads every descriptor the same way.  *out is NULL when d is already current. */
static int loader_normalise(const pb_plugin_desc *d, pb_plugin_desc **out, pb_error *err)
{
    *out = NULL;
    size_t elem = loader_option_size(d);
    if (d->struct_size >= sizeof *d && elem == sizeof(pb_option_def))
        return PB_OK;
    if (elem < offsetof(pb_option_def, offset))
        return pb_errorf(err, "'%s' declares option entries of %zu bytes, fewer than ABI 1.0's %zu",
                         d->name, elem, offsetof(pb_option_def, offset));
    size_t n = (size_t)d->n_options;
    pb_plugin_desc *copy = calloc(1, sizeof *copy + n * sizeof(pb_option_def));
    if (!copy)
        return pb_errorf(err, "out of memory");
    memcpy(copy, d, d->struct_size < sizeof *copy ? d->struct_size : sizeof *copy);
    copy->struct_size = sizeof *copy;
    copy->option_size = sizeof(pb_option_def);
    pb_option_def *opts = (pb_option_def *)(copy + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(&opts[i], (const char *)d->options + i * elem,
               elem < sizeof opts[i] ? elem : sizeof opts[i]);
    copy->options = n ? opts : NULL;
    *out = copy;
    return PB_OK;
}

static void loader_reject(loader *l, const char *path, const char *why)
{
    if (array_grow(&l->rejected, &l->cap_rejected, l->n_rejected + 1, sizeof(loader_rejected)))
        return;
    l->rejected[l->n_rejected].path = strdup(path);
    l->rejected[l->n_rejected].why = strdup(why);
    l->n_rejected++;
}

/* libltdl reports every failure of the system loader as "file not found"; the system loader's
 * own message names the real cause (a missing library, an unresolved symbol, not an ELF file). */
static int loader_open_failed(const char *path, pb_error *err)
{
    const char *why = lt_dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    else {
        why = dlerror();
        size_t n = strlen(path);
        if (why && strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2; /* glibc starts with the path, which the message already gives */
    }
    return pb_errorf(err, "%s: cannot load: %s", path, why ? why : "unknown error");
}

/* Opens path; returns 1 when it is not a placebench plugin at all (no descriptor symbol). */
static int loader_open(loader *l, const char *path, const loader_entry **out, pb_error *err)
{
    for (int i = 0; i < l->n_entries; i++)
        if (strcmp(l->entries[i]->path, path) == 0) {
            *out = l->entries[i];
            return PB_OK;
        }
    lt_dlhandle h = lt_dlopen(path);
    if (!h)
        return loader_open_failed(path, err);
    const pb_plugin_desc *d = lt_dlsym(h, PB_DESCRIPTOR_SYMBOL_NAME);
    if (!d) {
        lt_dlclose(h);
        pb_errorf(err, "%s: not a placebench plugin (no '%s' symbol)", path,
                  PB_DESCRIPTOR_SYMBOL_NAME);
        return 1;
    }
    pb_error why;
    pb_plugin_desc *normalised = NULL;
    if (loader_check_desc(d, &why) || loader_normalise(d, &normalised, &why) ||
        options_check_layout(normalised ? normalised : d, &why)) {
        free(normalised);
        lt_dlclose(h);
        return pb_errorf(err, "plugin %s %s", path, why.msg);
    }
    if (normalised)
        d = normalised;
    if (array_grow(&l->modules, &l->cap_modules, l->n_modules + 1, sizeof(loader_module)) ||
        array_grow(&l->entries, &l->cap_entries, l->n_entries + 1, sizeof(loader_entry *))) {
        free(normalised);
        lt_dlclose(h);
        return pb_errorf(err, "out of memory");
    }
    char *p = strdup(path);
    loader_entry *e = malloc(sizeof *e);
    if (!p || !e) {
        free(p);
        free(e);
        free(normalised);
        lt_dlclose(h);
        return pb_errorf(err, "out of memory");
    }
    *e = (loader_entry){d, p};
    l->modules[l->n_modules++] = (loader_module){h, p, normalised};
    l->entries[l->n_entries++] = e;
    *out = e;
    return PB_OK;
}

/* Writes the probe's answer for path on fd: "ok KIND NAME", "none MESSAGE" (no descriptor) or
 * "refused MESSAGE", one line. */
static void loader_probe_child(loader *l, const char *path, int fd)
{
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) { /* a module's constructor does not write into the harness's output */
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
    }
    const loader_entry *e;
    pb_error err;
    char line[sizeof err.msg + 64];
    int rc = loader_open(l, path, &e, &err);
    if (rc == PB_OK)
        snprintf(line, sizeof line, "ok %d %s", e->desc->kind, e->desc->name);
    else
        snprintf(line, sizeof line, "%s %s", rc == 1 ? "none" : "refused", err.msg);
    for (char *c = line; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    size_t n = strlen(line);
    line[n++] = '\n';
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, line + off, n - off);
        if (w <= 0 && errno != EINTR)
            break;
        off += w > 0 ? (size_t)w : 0;
    }
    _exit(0);
}

static double loader_now_ms(void)
{
    return pb_clock_monotonic() * 1e3;
}

/* Reads the probe's answer into buf until end of file or the time limit; returns 0 when it
 * timed out. */
static int loader_probe_read(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    double deadline = loader_now_ms() + LOADER_PROBE_TIMEOUT_MS;
    buf[0] = '\0';
    for (;;) {
        double left = deadline - loader_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, (int)left + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? 0 : 1;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 1;
        len += (size_t)n;
        buf[len] = '\0';
        if (len == cap - 1)
            return 1;
    }
}

/* Why a probe that gave no answer ended. */
static int loader_probe_died(const char *path, int timed_out, int wstatus, pb_error *err)
{
    if (timed_out)
        return pb_errorf(err, "%s: cannot load: still loading after %d s (killed)", path,
                         LOADER_PROBE_TIMEOUT_MS / 1000);
    if (WIFSIGNALED(wstatus))
        return pb_errorf(err, "%s: cannot load: crashed while loading: signal %d (%s)", path,
                         WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
    return pb_errorf(err, "%s: cannot load: exited with status %d while loading", path,
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}

/*
 * Opens path in a child process, so that a module that crashes the dynamic loader or whose
 * constructor exits or crashes cannot take the harness down.  PB_OK with the plugin's kind and
 * name (*name: caller frees); 1 when it is not a placebench plugin; PB_ERR with the reason.
 */
static int loader_probe(loader *l, const char *path, int *kind, char **name, pb_error *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return pb_errorf(err, "%s: cannot probe: pipe: %s", path, strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return pb_errorf(err, "%s: cannot probe: fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        loader_probe_child(l, path, fds[1]);
    }
    close(fds[1]);
    char answer[sizeof err->msg + 64];
    int timed_out = !loader_probe_read(fds[0], answer, sizeof answer);
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    char *nl = strchr(answer, '\n');
    if (timed_out || !nl || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
        return loader_probe_died(path, timed_out, wstatus, err);
    *nl = '\0';
    int at = 0;
    if (sscanf(answer, "ok %d %n", kind, &at) == 1 && at > 0) {
        *name = strdup(answer + at);
        return *name ? PB_OK : pb_errorf(err, "out of memory");
    }
    if (strncmp(answer, "none ", 5) == 0) {
        pb_errorf(err, "%s", answer + 5);
        return 1;
    }
    return pb_errorf(err, "%s", strncmp(answer, "refused ", 8) == 0 ? answer + 8 : answer);
}

static int loader_add_candidate(loader *l, const char *path, int kind, char *name)
{
    char *p = strdup(path);
    if (!p || array_grow(&l->candidates, &l->cap_candidates, l->n_candidates + 1,
                         sizeof(loader_candidate))) {
        free(p);
        free(name);
        return PB_ERR;
    }
    l->candidates[l->n_candidates++] = (loader_candidate){p, kind, name};
    return PB_OK;
}

int loader_open_file(loader *l, const char *path, const loader_entry **out, pb_error *err)
{
    int kind;
    char *name = NULL;
    int rc = loader_probe(l, path, &kind, &name, err);
    free(name);
    if (rc != PB_OK)
        return PB_ERR;
    return loader_open(l, path, out, err) == PB_OK ? PB_OK : PB_ERR;
}

/* Probes every *.so of one folder in name order; a folder that does not exist is skipped. */
static void loader_scan_dir(loader *l, const char *dir)
{
    char **names;
    int n;
    pb_error err;
    if (fileio_list(dir, ".so", &names, &n, &err) != PB_OK)
        return;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int kind;
        char *name = NULL;
        int rc = loader_probe(l, path, &kind, &name, &err);
        if (rc == PB_OK)
            loader_add_candidate(l, path, kind, name);
        else /* not a plugin at all is said too: a file named .so is meant to be one */
            loader_reject(l, path, err.msg);
    }
    fileio_list_free(names, n);
}

int loader_scan(loader *l, pb_error *err)
{
    (void)err;
    if (l->scanned)
        return PB_OK;
    l->scanned = 1;
    for (int i = 0; i < l->n_dirs; i++)
        loader_scan_dir(l, l->dirs[i]);
    return PB_OK;
}

/* Loads a candidate that passed the probe into this process; a failure here (the file changed
 * since) is recorded as a refusal. */
static int loader_load(loader *l, const loader_candidate *c, const loader_entry **out,
                       pb_error *err)
{
    int rc = loader_open(l, c->path, out, err);
    if (rc == PB_OK)
        return PB_OK;
    if (rc == 1)
        pb_errorf(err, "%s: no longer a placebench plugin", c->path);
    loader_reject(l, c->path, err->msg);
    return PB_ERR;
}

int loader_find(loader *l, int kind, const char *name, const loader_entry **out, pb_error *err)
{
    loader_scan(l, err);
    for (int i = 0; i < l->n_candidates; i++)
        if (l->candidates[i].kind == kind && strcmp(l->candidates[i].name, name) == 0)
            return loader_load(l, &l->candidates[i], out, err);
    size_t cap = l->n_candidates > 0 ? (size_t)l->n_candidates : 1;
    const char **names = malloc(cap * sizeof(char *));
    int n = 0;
    for (int i = 0; names && i < l->n_candidates; i++)
        if (l->candidates[i].kind == kind)
            names[n++] = l->candidates[i].name;
    const char *close = names ? options_did_you_mean(name, names, n) : NULL;
    char hint[256] = "";
    if (close)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", close);
    else if (n == 0)
        snprintf(hint, sizeof hint, " (no %s plugins found; see 'placebench list')",
                 loader_kind_name(kind));
    free(names);
    /* A rejected module may be the one the user meant: say why it was refused. */
    char rejected[600] = "";
    for (int i = 0; i < l->n_rejected; i++)
        if (strstr(l->rejected[i].path, name)) {
            snprintf(rejected, sizeof rejected, "; %s", l->rejected[i].why);
            break;
        }
    return pb_errorf(err, "unknown %s '%s'%s%s", loader_kind_name(kind), name, hint, rejected);
}

static int loader_entry_cmp(const void *a, const void *b)
{
    const loader_entry *x = a, *y = b;
    if (x->desc->kind != y->desc->kind)
        return x->desc->kind - y->desc->kind;
    return strcmp(x->desc->name, y->desc->name);
}

const loader_entry *loader_list(loader *l, int *n)
{
    pb_error err;
    loader_scan(l, &err);
    if (!l->listed) { /* every candidate is loaded here: a listing shows descriptors */
        l->listed = 1;
        for (int i = 0; i < l->n_candidates; i++) {
            const loader_entry *e;
            loader_load(l, &l->candidates[i], &e, &err);
        }
    }
    free(l->listing);
    l->listing = malloc((size_t)(l->n_entries ? l->n_entries : 1) * sizeof(loader_entry));
    int k = 0;
    /* The first plugin found of a kind and name wins; later ones are shadowed. */
    for (int i = 0; l->listing && i < l->n_entries; i++) {
        int dup = 0;
        for (int j = 0; j < k && !dup; j++)
            dup = l->listing[j].desc->kind == l->entries[i]->desc->kind &&
                  strcmp(l->listing[j].desc->name, l->entries[i]->desc->name) == 0;
        if (!dup)
            l->listing[k++] = *l->entries[i];
    }
    if (k > 0)
        qsort(l->listing, (size_t)k, sizeof(loader_entry), loader_entry_cmp);
    *n = k;
    return l->listing;
}

/* Rejected modules (wrong ABI, missing operations, failed to load) with the reason. */
int loader_rejected_count(const loader *l)
{
    return l->n_rejected;
}

const char *loader_rejected_reason(const loader *l, int i)
{
    return i >= 0 && i < l->n_rejected ? l->rejected[i].why : NULL;
}

unsigned loader_placer_uses(const loader_entry *e)
{
    if (e->desc->kind != PB_KIND_PLACER)
        return 0;
    const pb_placer_ops *o = e->desc->ops;
    if (o->struct_size < offsetof(pb_placer_ops, uses) + sizeof o->uses)
        return PB_USES_EMBEDDING | PB_USES_TRAVERSAL;
    return o->uses;
}

/* ---------------------------------------------------------------- what works with what */

static unsigned loader_accepts(const loader_entry *sim)
{
    const pb_simulator_ops *o = sim->desc->ops;
    unsigned a = 0;
    if (o->struct_size >= offsetof(pb_simulator_ops, accepts) + sizeof o->accepts)
        a = o->accepts;
    return a ? a : PB_KIND_BIT(PB_STRATEGY_PLACEMENT);
}

static unsigned loader_produces(const loader_entry *placer)
{
    const pb_placer_ops *o = placer->desc->ops;
    unsigned p = 0;
    if (o->struct_size >= offsetof(pb_placer_ops, produces) + sizeof o->produces)
        p = o->produces;
    return p ? p : PB_KIND_BIT(PB_STRATEGY_PLACEMENT);
}

static const char *loader_simulator_list(const loader_entry *placer)
{
    const pb_placer_ops *o = placer->desc->ops;
    if (o->struct_size < offsetof(pb_placer_ops, simulators) + sizeof o->simulators)
        return NULL;
    return o->simulators;
}

/* Whether the comma-separated list names `name` (spaces around names are ignored). */
static int loader_list_names(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && last[-1] == ' ')
            last--;
        if ((size_t)(last - p) == len && strncmp(p, name, len) == 0)
            return 1;
        p = end;
    }
    return 0;
}

/* "plain placements", "replicated strategies or provisioned plans", ... for kind bits. */
static void loader_kind_words(unsigned bits, char *out, size_t n)
{
    static const char *const words[] = {"plain placements", "replicated strategies",
                                        "provisioned plans"};
    size_t used = 0;
    out[0] = '\0';
    int listed = 0;
    for (unsigned k = 0; k < sizeof words / sizeof *words; k++)
        if (bits & PB_KIND_BIT(k)) {
            int w = snprintf(out + used, n - used, "%s%s", listed ? " or " : "", words[k]);
            if (w < 0 || (size_t)w >= n - used)
                return;
            used += (size_t)w;
            listed = 1;
        }
}

int loader_pair_applies(const loader_entry *placer, const loader_entry *sim, char *why, size_t n)
{
    if (placer->desc->kind != PB_KIND_PLACER || sim->desc->kind != PB_KIND_SIMULATOR)
        return 1;
    const char *list = loader_simulator_list(placer);
    if (list && !loader_list_names(list, sim->desc->name)) {
        snprintf(why, n, "placer '%s' works only with simulator %s, not '%s'", placer->desc->name,
                 list, sim->desc->name);
        return 0;
    }
    unsigned produces = loader_produces(placer), accepts = loader_accepts(sim);
    if (produces & accepts)
        return 1;
    char made[96], taken[96];
    loader_kind_words(produces, made, sizeof made);
    loader_kind_words(accepts, taken, sizeof taken);
    snprintf(why, n, "placer '%s' returns %s and simulator '%s' evaluates %s", placer->desc->name,
             made, sim->desc->name, taken);
    return 0;
}
