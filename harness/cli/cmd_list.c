/* cmd_list.c — `placebench list`: the plugins on the search path. */
#include "cli.h"

#include "plugin/loader.h"

#include <stdio.h>
#include <string.h>

static const char list_usage[] =
    "placebench list [KIND]\n"
    "\n"
    "Lists the plugins found on the plugin search path (PLACEBENCH_PLUGIN_PATH, then the\n"
    "plugins folder beside the placebench binary, then the installed plugin folder), with\n"
    "kind, name, version, description and file; then any module that was refused and why.\n"
    "KIND (traversal, simulator, embedding, placer) limits the list.";

int cmd_list(int argc, char **argv)
{
    int only = 0;
    if (argc > 2)
        return cli_usage(list_usage);
    if (argc == 2) {
        if (cli_is_help(argv[1])) {
            puts(list_usage);
            return 0;
        }
        only = loader_kind_from_name(argv[1]);
        if (!only)
            return cli_error("unknown plugin kind '%s' (traversal, simulator, embedding, placer)",
                             argv[1]);
    }
    pb_error err;
    loader *l = loader_new(NULL, 0, &err);
    if (!l)
        return cli_error("%s", err.msg);
    int n;
    const loader_entry *e = loader_list(l, &n);
    for (int i = 0; i < n; i++) {
        if (only && e[i].desc->kind != only)
            continue;
        printf("%-10s %-16s %-6s %s\n", loader_kind_name(e[i].desc->kind), e[i].desc->name,
               e[i].desc->version, e[i].desc->description ? e[i].desc->description : "");
        printf("%-10s %-16s %-6s   %s\n", "", "", "", e[i].path);
    }
    for (int i = 0; i < loader_rejected_count(l); i++)
        printf("refused: %s\n", loader_rejected_reason(l, i));
    loader_free(l);
    return 0;
}
