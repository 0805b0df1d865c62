/* cmd_help.c — `placebench help`: a command's usage, or a plugin's description and options. */
#include "cli.h"

#include "plugin/loader.h"
#include "plugin/options.h"

#include <stdio.h>
#include <string.h>

static const char help_usage[] =
    "placebench help COMMAND | KIND/NAME\n"
    "\n"
    "help COMMAND prints the usage of a command (the same as 'placebench COMMAND --help');\n"
    "help KIND/NAME (e.g. placer/random) prints a plugin's description and its options with\n"
    "type, default, range and meaning.";

int cmd_help(int argc, char **argv)
{
    if (argc != 2)
        return cli_usage(help_usage);
    if (cli_is_help(argv[1])) {
        puts(help_usage);
        return 0;
    }
    const char *slash = strchr(argv[1], '/');
    if (!slash) {
        char *sub[] = {argv[1], "--help", NULL};
        return cli_dispatch(2, sub);
    }
    char kind_word[32];
    snprintf(kind_word, sizeof kind_word, "%.*s", (int)(slash - argv[1]), argv[1]);
    int kind = loader_kind_from_name(kind_word);
    if (!kind)
        return cli_error("unknown plugin kind '%s' (traversal, simulator, embedding, placer)",
                         kind_word);
    pb_error err;
    loader *l = loader_new(NULL, 0, &err);
    if (!l)
        return cli_error("%s", err.msg);
    const loader_entry *e;
    if (loader_find(l, kind, slash + 1, &e, &err)) {
        loader_free(l);
        return cli_error("%s", err.msg);
    }
    printf("%s/%s %s — %s\nfile: %s\n\n", kind_word, e->desc->name, e->desc->version,
           e->desc->description ? e->desc->description : "", e->path);
    options_print_help(stdout, e->desc);
    loader_free(l);
    return 0;
}
