/* cli_torch.c — imports a PyTorch model's traced training step (harness/data/torch_export.py)
 * through the node-link reader's validation. */
#include "cli_torch.h"

#include "cli.h"
#include "cli_output.h"
#include "data/nodelink.h"
#include "model/graph.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Runs argv (argv[0] looked up in PATH) and waits; its exit status, or -1 when it cannot run. */
static int cli_torch_run(char *const argv[])
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        cli_error("dataset import: cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int cli_torch_import(const char *model, int batch, const char *out)
{
    const char *python = getenv("PLACEBENCH_PYTHON");
    char tmp[4096], batch_text[32];
    snprintf(tmp, sizeof tmp, "%s.torch.tmp", out);
    snprintf(batch_text, sizeof batch_text, "%d", batch > 0 ? batch : 2);
    char *argv[] = {(char *)(python && *python ? python : "python3"),
                    (char *)PB_TORCH_EXPORTER,
                    (char *)model,
                    "--out",
                    tmp,
                    "--batch",
                    batch_text,
                    NULL};
    int status = cli_torch_run(argv);
    if (status != 0) {
        remove(tmp);
        return status < 0 ? 1
                          : cli_error("dataset import: %s %s failed (exit %d; it needs torch, "
                                      "torchvision and functorch)",
                                      argv[0], PB_TORCH_EXPORTER, status);
    }
    pb_graph *g;
    pb_error err;
    int rc = nodelink_read(tmp, &g, &err);
    remove(tmp);
    if (rc != PB_OK)
        return cli_error("dataset import: the exported graph is refused: %s", err.msg);
    cli_output o;
    rc = cli_output_open(&o, out);
    if (!rc) {
        int ok = nodelink_fwrite(o.f, g, &err) == PB_OK;
        if (!ok)
            cli_error("%s: %s", out, err.msg);
        rc = cli_output_close(&o, ok) || !ok;
    }
    graph_free(g);
    return rc;
}
