/*
 * gm.h - the public face of the gpumerge core: its configuration (config.h), the
 * order of lines (keys.h) and the three operations the command line offers (merge,
 * sort, check).
 *
 * Data flows files -> core/input (parse) -> core/engine (cpu*.c or cuda/) ->
 * core/output (format, write). Nothing here includes a CUDA header. Library code
 * never exits and never prints: every failure is reported through a gm_status,
 * every message through the config's callback, and only cli/main.c turns a status
 * into an exit code.
 *
 * The core's top, above every room: gm.h, gm.c (gm_run over the streaming data
 * plane or the records path) and api.c (the library's calls on memory). The
 * rooms, from the ground up: base/, keys/, read/, sort/, write/, merge/, runs/,
 * device/, plan/, records/, stream/; each includes only rooms below it, and only
 * device/ includes cuda/ (make layout checks both).
 */
#ifndef GM_H
#define GM_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "keys/keys.h"
#include "base/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs op over the inputs. Returns GM_OK, or an error code with st filled in.
 * GM_OP_CHECK returns GM_DISORDER (with the "FILE:LINE: disorder: TEXT" message in
 * st) when an input is not sorted. names are file names, "-" meaning standard
 * input; no names means standard input. */
int gm_run(gm_op op, const gm_config *cfg, char *const *names, int nnames, gm_status *st);

/* The device cfg->gpu names, in words for --version: "N: NAME (compute capability
 * X.Y, ...)", or why none is usable ("no usable CUDA device: no NVIDIA driver
 * loaded", with no CUDA call then; "none: built without CUDA"; "--gpu=N: no such
 * CUDA device: ..."). Starts CUDA where a driver is loaded, and ends it before
 * returning. Returns GM_OK when the device is usable, else the probe's code. */
int gm_device_describe(const gm_config *cfg, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
