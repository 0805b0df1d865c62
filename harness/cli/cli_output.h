/* cli_output.h — command output to stdout or to a file that appears only when complete. */
#ifndef PB_CLI_OUTPUT_H
#define PB_CLI_OUTPUT_H

#include <stdio.h>

typedef struct cli_output {
    FILE *f;    /* where to write */
    char *path; /* the final file; NULL for stdout */
    char *tmp;  /* the file written until cli_output_close renames it */
} cli_output;

/* Opens stdout (path NULL or "-") or PATH.tmp next to PATH; prints the error and returns 1 on
 * failure. */
int cli_output_open(cli_output *o, const char *path);
/* ok != 0: flushes and renames PATH.tmp to PATH; ok == 0: removes PATH.tmp, so a failed command
 * leaves no partial file.  Returns 0, or 1 with the error printed when writing failed. */
int cli_output_close(cli_output *o, int ok);

#endif
