/* cmd_new.h — `placebench new`: the template texts it writes. */
#ifndef PB_CMD_NEW_H
#define PB_CMD_NEW_H

/* plugins/skeleton/placer.c as the build compiled it in (static storage, NUL-terminated). */
const char *cmd_new_skeleton_placer(void);

#endif
