/* version.c — the version string compiled into libplacebench. */
#include "version.h"

const char *pb_version_string(void)
{
    return PB_VERSION " (git " PB_GIT_REV ")";
}
