/* hd.h - FK_HD marks small inline functions that both C and CUDA (host and device) code call. */
#ifndef FK_HD_H
#define FK_HD_H

#if defined(__CUDACC__)
#define FK_HD __host__ __device__ __forceinline__
#else
#define FK_HD static inline
#endif

/* Index of the highest set bit of x (x > 0). */
FK_HD int fk_log2_u64(unsigned long long x)
{
#ifdef __CUDA_ARCH__
    return 63 - __clzll((long long)x);
#else
    return 63 - __builtin_clzll(x);
#endif
}

#endif
