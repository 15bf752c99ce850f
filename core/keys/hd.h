/*
 * hd.h - GM_HD, the mark of a function compiled for both sides: the host alone
 * in the C core, the host and the device under nvcc. The co-rank (corank.h) and
 * the records' key prefixes (keyprefix.h) are written once with it, so that the
 * kernels and the CPU engines run the very same code.
 */
#ifndef GM_HD_H
#define GM_HD_H

#ifdef __CUDACC__
#define GM_HD static inline __host__ __device__
#else
#define GM_HD static inline
#endif

#endif
