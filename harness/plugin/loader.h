/* loader.h — finds and loads plugins (the only user of libltdl). */
#ifndef PB_LOADER_H
#define PB_LOADER_H

#include "placebench.h"

typedef struct loader loader;

/* One plugin found on the search path. */
typedef struct loader_entry {
    const pb_plugin_desc *desc; /* borrowed from the loaded module, valid until loader_free */
    const char *path;           /* file it came from */
} loader_entry;

/*
 * Creates a loader whose search path is, in order: the `extra` folders (a config's plugin_path),
 * the folders of PLACEBENCH_PLUGIN_PATH (':'-separated), the build tree's plugin folder next to
 * the running executable, and the installed plugin folder.  The first plugin of a given kind and
 * name wins.  Caller frees with loader_free.
 */
loader *loader_new(const char *const *extra, int n_extra, pb_error *err);
void loader_free(loader *l);

/* Probes every module on the search path (once), each in a child process that opens it and
 * reads its descriptor, so that a module that crashes or exits while loading is refused instead
 * of ending the harness.  A module that is not a placebench plugin (no descriptor), a plugin
 * with a wrong ABI or missing operations, or one that crashed, exited or hung while loading, is
 * refused with the reason.  Nothing is loaded into this process yet: loader_find loads the plugins
 * asked for. */
int loader_scan(loader *l, pb_error *err);

/* Finds the plugin of `kind` called `name` (scanning first if needed) and loads it into this
 * process; on failure the error names the closest known name. */
int loader_find(loader *l, int kind, const char *name, const loader_entry **out, pb_error *err);

/* All plugins found (each loaded into this process), sorted by kind then name; *n receives the
 * count.  Borrowed. */
const loader_entry *loader_list(loader *l, int *n);

/* Probes one module file in a child process, then loads it and validates its descriptor (ABI,
 * struct size, kind, ops). */
int loader_open_file(loader *l, const char *path, const loader_entry **out, pb_error *err);

/* Modules on the search path that were refused (wrong ABI, missing operations, failed to
 * load): their count, and the i-th reason (file and why; borrowed). */
int loader_rejected_count(const loader *l);
const char *loader_rejected_reason(const loader *l, int i);

/* The PB_USES_* bits of a placer plugin: its ops table's `uses`, or both bits for a placer
 * built before the field existed (ABI 1.0); 0 for plugins of other kinds. */
unsigned loader_placer_uses(const loader_entry *e);

/* Whether placer plugin `placer` can run with simulator plugin `sim` (ABI 1.4: the simulator
 * accepts a strategy kind the placer produces, and the placer's simulator list, when it has one,
 * names the simulator; plugins built before 1.4 produce and accept plain placements).  1 when
 * it applies; 0 with the reason in why ("placer 'dp-nccl' returns replicated strategies and
 * simulator 'placeto' evaluates plain placements"). */
int loader_pair_applies(const loader_entry *placer, const loader_entry *sim, char *why, size_t n);

/* "placer", "simulator", ... for a pb_kind; NULL for an unknown kind. */
const char *loader_kind_name(int kind);
/* The pb_kind for a word, or 0. */
int loader_kind_from_name(const char *word);

#endif
