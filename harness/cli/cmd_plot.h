/* cmd_plot.h — what other commands (compare) use of `placebench plot`'s gnuplot runner. */
#ifndef PB_CMD_PLOT_H
#define PB_CMD_PLOT_H

#include <stddef.h>

/* The folder of the gnuplot scripts, found as `placebench plot` finds it ($PLACEBENCH_PLOTS_DIR,
 * beside the program, the source or install folder); prints the error and returns 1 when none. */
int cmd_plot_scripts_dir(char *buf, size_t n);
/* Appends name='value' to the gnuplot assignments in buf (n bytes); prints the error and returns
 * 1 when the value cannot be passed. */
int cmd_plot_gp_var(char *buf, size_t n, const char *name, const char *value);
/* Runs `gnuplot -e vars script`; prints the error and returns 1 when it fails. */
int cmd_plot_gnuplot(const char *script, const char *vars);

/* mkdir -p path; prints the error and returns 1 on failure. */
int cmd_plot_mkdirs(const char *path);

#endif
