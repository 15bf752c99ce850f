/*
 * version.c - gpumerge's --version text, in the shape of coreutils' version_etc:
 * the name and version, the engine this binary was built with, the CUDA device
 * --gpu names here (or why none is usable: no driver is found without a CUDA
 * call, so the answer is immediate where there is none), the copyright,
 * the licence and the warranty lines. The Makefile compiles this one file with
 * GM_BUILD_ENGINE set to the build's description ("CPU only", or the CUDA release
 * and the GPU architectures embedded) and GM_VERSION from the VERSION file, and
 * rebuilds it whenever either changes.
 */
#include "options.h"

#ifndef GM_BUILD_ENGINE
#define GM_BUILD_ENGINE "unknown (built without the Makefile)"
#endif

void gm_cli_version(FILE *to, const gm_config *cfg)
{
    char device[400];
    gm_device_describe(cfg, device, sizeof device);
    fprintf(to,
            "gpumerge %s\n"
            "engine: %s\n"
            "device: %s\n"
            "Copyright (C) 2026 the gpumerge authors.\n"
            "License MIT: <https://opensource.org/licenses/MIT>.\n"
            "This is free software: you are free to change and redistribute it.\n"
            "There is NO WARRANTY, to the extent permitted by law.\n",
            GM_VERSION, GM_BUILD_ENGINE, device);
}
