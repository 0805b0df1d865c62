/* cmd_check.c — `placebench check`: validate a config completely and count its runs. */
#include "cli.h"

#include "config/config.h"
#include "run/plan.h"

#include <stdio.h>
#include <string.h>

static const char check_usage[] =
    "placebench check CONFIG [--profile NAME]\n"
    "\n"
    "Evaluates CONFIG, expands its sweep, loads every plugin it names, checks every option\n"
    "against the plugin's option table and loads every graph; prints the number of runs and\n"
    "the plugins used.  Runs nothing and writes no results file.  Exit status 1 on any error\n"
    "(printed as one line 'file:line: message').";

/* Prints each distinct plugin used by the plan once. */
static void check_print_plugins(const plan *p)
{
    for (int i = 0; i < p->n_runs; i++) {
        const plan_plugin *pp[4] = {&p->runs[i].simulator, &p->runs[i].placer,
                                    &p->runs[i].embedding, &p->runs[i].traversal};
        for (int k = 0; k < 4; k++) {
            if (!pp[k]->entry)
                continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) {
                const plan_plugin *q[4] = {&p->runs[j].simulator, &p->runs[j].placer,
                                           &p->runs[j].embedding, &p->runs[j].traversal};
                seen = q[k]->entry == pp[k]->entry;
            }
            if (!seen)
                printf("  %-10s %-16s %-8s %s\n", loader_kind_name(pp[k]->entry->desc->kind),
                       pp[k]->entry->desc->name, pp[k]->entry->desc->version, pp[k]->entry->path);
        }
    }
}

int cmd_check(int argc, char **argv)
{
    const char *config = NULL, *profile = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            puts(check_usage);
            return 0;
        } else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
            profile = argv[++i];
        } else if (argv[i][0] == '-' || config) {
            return cli_usage(check_usage);
        } else {
            config = argv[i];
        }
    }
    if (!config)
        return cli_usage(check_usage);
    experiment *x;
    plan *p;
    pb_error err;
    if (config_load(config, profile, &x, &err) || plan_build(x, &p, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%s: experiment '%s', %d runs over %d graphs, results file %s\n", config, p->x->name,
           p->n_runs, p->n_graphs, p->x->results);
    check_print_plugins(p);
    plan_print_skipped(p, stdout);
    plan_free(p);
    return 0;
}
