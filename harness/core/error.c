/* error.c — pb_errorf, the one way errors are written. */
#include "placebench.h"

#include <stdarg.h>
#include <stdio.h>

int pb_errorf(pb_error *err, const char *fmt, ...)
{
    if (!err)
        return PB_ERR;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return PB_ERR;
}
