/*
 * version.c - gpumerge's --version text: the version and the engine this binary
 * was built with. The Makefile compiles this one file with GM_BUILD_ENGINE set
 * to the build's description ("CPU only", or the CUDA release and the GPU
 * architectures embedded), and rebuilds it whenever that description changes.
 */
#include "options.h"

#ifndef GM_BUILD_ENGINE
#define GM_BUILD_ENGINE "unknown (built without the Makefile)"
#endif

void gm_cli_version(FILE *to)
{
    fprintf(to, "gpumerge %s\nengine: %s\n", GM_VERSION, GM_BUILD_ENGINE);
}
