/*
 * status.c - the ground floor's code: what types.h declares, the status that
 * carries an error upward (gm_fail) and the names of the shared enums. Every layer
 * links it, the CUDA engine included, and it depends on nothing but the C library.
 */
#include "base/types.h"

#include <stdarg.h>
#include <stdio.h>

int gm_fail(gm_status *st, gm_code code, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
        st->code = code;
        st->len = 0;
    }
    return code;
}

const char *gm_kernel_name(gm_kernel k)
{
    switch (k) {
    case GM_KERNEL_BASIC: return "basic";
    case GM_KERNEL_TILED: return "tiled";
    case GM_KERNEL_CIRCULAR: return "circular";
    default: return "auto";
    }
}
