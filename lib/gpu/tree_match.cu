/* tree_match.cu - the ID join of tree_match.c on the GPU: a table indexed by ID, or CUB's radix sorts and a search. */
#include <cub/device/device_radix_sort.cuh>

#include "common.cuh"
#include "tree_match.h"

/*
 * Step 1 of tree_match.h on the device; steps 2 and 3 (the segmented sort
 * and reduce) stay on the host, so that every link, count and score is the
 * one the CPU path gives, bit for bit. dest[place] gets the B halo of each
 * member of A (NONE: in no halo of B).
 *   dense (IDs span at most 4 times the members): B's halos scattered into
 *   a table indexed by ID - lo (atomicExch: an ID found twice is a
 *   duplicate), A's members gathering theirs, a bit an ID of the span
 *   marking A's (a bit set twice: a duplicate). Device memory: B's IDs
 *   (8 bytes a member, freed before A's come), 4 bytes and a bit an ID of
 *   the span, A's IDs (8) and dest (4): 16 bytes and a bit a particle for
 *   Gadget's IDs 1..N.
 *   sparse: B's (ID - lo, halo) radix-sorted by CUB over the bits the span
 *   needs, then A's (ID - lo, place); each sorted A key searched in B's
 *   (the queries come in order: their paths share the cache). Device
 *   memory: 12 bytes a member of B kept, 24 of A while it sorts, 4 of dest.
 * A duplicate ID sets *dup and fills nothing: the caller's CPU path then
 * names it as it does.
 */

#define NONE 0xffffffffu

/* Warp w of the grid takes halo w: its lanes stride over the members. */
__global__ void k_scatter(const int64_t *ids, const uint64_t *first, const uint64_t *len, uint64_t nhalo, uint64_t lo,
                          uint32_t *table, int *dup)
{
    const uint64_t h = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (h >= nhalo) return;
    const int64_t *id = ids + first[h];
    for (uint64_t j = threadIdx.x % 32; j < len[h]; j += 32)
        if (atomicExch(&table[(uint64_t)id[j] - lo], (uint32_t)h) != NONE) *dup = 1;
}

__global__ void k_gather(const int64_t *ids, const uint64_t *first, const uint64_t *len, const uint64_t *at,
                         const uint8_t *only, uint64_t nhalo, uint64_t lo, const uint32_t *table, uint32_t *seen,
                         uint32_t *dest, unsigned long long *found, int *dup)
{
    const uint64_t h = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (h >= nhalo || (only && !only[h])) return;
    const int64_t *id = ids + first[h];
    uint32_t *d = dest + at[h];
    unsigned n = 0;
    for (uint64_t j = threadIdx.x % 32; j < len[h]; j += 32) {
        const uint64_t v = (uint64_t)id[j] - lo;
        const uint32_t bit = 1u << (v & 31);
        if (atomicOr(&seen[v >> 5], bit) & bit) *dup = 1;
        const uint32_t t = table[v];
        d[j] = t;
        n += t != NONE;
    }
    /* the whole warp is here (h is the warp's): one add a halo */
    n = __reduce_add_sync(0xffffffffu, n);
    if (threadIdx.x % 32 == 0 && n) atomicAdd(found, (unsigned long long)n);
}

/* A catalogue's members in place order as (ID - lo, halo) or (ID - lo, place). */
__global__ void k_records(const int64_t *ids, const uint64_t *first, const uint64_t *len, const uint64_t *at,
                          const uint8_t *only, uint64_t nhalo, uint64_t lo, int by_place, uint64_t *key,
                          uint32_t *val)
{
    const uint64_t h = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (h >= nhalo || (only && !only[h])) return;
    const int64_t *id = ids + first[h];
    for (uint64_t j = threadIdx.x % 32; j < len[h]; j += 32) {
        key[at[h] + j] = (uint64_t)id[j] - lo;
        val[at[h] + j] = by_place ? (uint32_t)(at[h] + j) : (uint32_t)h;
    }
}

__global__ void k_adjacent(const uint64_t *key, uint64_t n, int *dup)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x + 1; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        if (key[i] == key[i - 1]) *dup = 1;
}

/* Each of A's sorted keys searched in B's: dest[its place] = the B halo. */
__global__ void k_search(const uint64_t *ka, const uint32_t *va, uint64_t na, const uint64_t *kb, const uint32_t *vb,
                         uint64_t nb, uint32_t *dest, unsigned long long *found)
{
    unsigned n = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < na; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t k = ka[i];
        uint64_t l = 0, h = nb;
        while (l < h) {
            const uint64_t m = l + (h - l) / 2;
            if (kb[m] < k) l = m + 1; else h = m;
        }
        if (l < nb && kb[l] == k) dest[va[i]] = vb[l], n++;
    }
    if (n) atomicAdd(found, (unsigned long long)n);
}

/* The bits of keys up to span - 1. */
static int bits_of(uint64_t span)
{
    int b = 1;
    while (b < 64 && (span - 1) >> b) b++;
    return b;
}

/* n records (key, val) in place order sorted by key over bits bits: the
 * result in k/v (their alternates freed). */
static int sort_records(dbuf<uint64_t> &k, dbuf<uint32_t> &v, uint64_t n, int bits, fk_error *err)
{
    dbuf<uint64_t> k2;
    dbuf<uint32_t> v2;
    if (k2.alloc(n, err) || v2.alloc(n, err)) return FK_EDEVICE;
    cub::DoubleBuffer<uint64_t> kd(k.p, k2.p);
    cub::DoubleBuffer<uint32_t> vd(v.p, v2.p);
    size_t bytes = 0;
    FK_CU(cub::DeviceRadixSort::SortPairs(nullptr, bytes, kd, vd, (int64_t)n, 0, bits, cudaStreamPerThread), err);
    dbuf<unsigned char> tmp;
    if (tmp.alloc(bytes, err)) return FK_EDEVICE;
    FK_CU(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, kd, vd, (int64_t)n, 0, bits, cudaStreamPerThread), err);
    if (kd.Current() != k.p) std::swap(k.p, k2.p);
    if (vd.Current() != v.p) std::swap(v.p, v2.p);
    return FK_OK;
}

/* A catalogue's halo table on the device: first, len, at (and only). */
struct halos {
    dbuf<uint64_t> first, len, at;
    dbuf<uint8_t> only;
    int put(const fk_treecat *c, const uint8_t *o, const uint64_t *places, fk_error *err)
    {
        const uint64_t n = c->nhalo;
        if (first.alloc(n, err) || len.alloc(n, err) || at.alloc(n + 1, err)) return FK_EDEVICE;
        if (o && only.alloc(n, err)) return FK_EDEVICE;
        if (n && (fk_gpu_put(first.p, c->first, n * 8, err) || fk_gpu_put(len.p, c->len, n * 8, err) ||
                  (o && fk_gpu_put(only.p, o, n, err))))
            return FK_EDEVICE;
        return fk_gpu_put(at.p, places, (n + 1) * 8, err);
    }
};

static int put_ids(dbuf<int64_t> &d, const fk_treecat *c, fk_error *err)
{
    if (d.alloc(c->nids, err)) return FK_EDEVICE;
    return c->nids ? fk_gpu_put(d.p, c->ids, c->nids * 8, err) : FK_OK;
}

extern "C" int fk_gpu_mtree_join(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
                                 const uint64_t *at_b, uint64_t lo, uint64_t hi, int dense, uint32_t *dest,
                                 uint64_t *shared, int *dup, fk_error *err)
{
    FK_GPU_ENTER(err);
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo], span = hi - lo + 1;
    *dup = 0, *shared = 0;
    if (na > NONE - 1) return fk_fail(err, FK_EINVAL, "more than 2^32 - 2 members of one catalogue to match on the GPU");
    dbuf<int> d_dup;
    dbuf<unsigned long long> d_found;
    dbuf<uint32_t> d_dest;
    if (d_dup.alloc(1, err) || d_found.alloc(1, err) || d_dest.alloc(na, err)) return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(d_dup.p, 0, sizeof(int), cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(d_found.p, 0, sizeof(unsigned long long), cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(d_dest.p, 0xff, (na ? na : 1) * 4, cudaStreamPerThread), err);
    const unsigned block = 256;
    halos ha, hb;
    if (hb.put(b, NULL, at_b, err)) return FK_EDEVICE;
    if (dense) {
        dbuf<uint32_t> table, seen;
        if (table.alloc(span, err)) return FK_EDEVICE;
        FK_CU(cudaMemsetAsync(table.p, 0xff, span * 4, cudaStreamPerThread), err);
        {
            dbuf<int64_t> ids;
            if (put_ids(ids, b, err)) return FK_EDEVICE;
            k_scatter<<<fk_grid_all(b->nhalo * 32, block), block, 0, cudaStreamPerThread>>>(
                ids.p, hb.first.p, hb.len.p, b->nhalo, lo, table.p, d_dup.p);
            FK_LAUNCHED("k_scatter", err);
        }
        if (seen.alloc((span + 31) / 32, err) || ha.put(a, only, at_a, err)) return FK_EDEVICE;
        FK_CU(cudaMemsetAsync(seen.p, 0, (span + 31) / 32 * 4, cudaStreamPerThread), err);
        dbuf<int64_t> ids;
        if (put_ids(ids, a, err)) return FK_EDEVICE;
        k_gather<<<fk_grid_all(a->nhalo * 32, block), block, 0, cudaStreamPerThread>>>(
            ids.p, ha.first.p, ha.len.p, ha.at.p, only ? ha.only.p : nullptr, a->nhalo, lo, table.p, seen.p, d_dest.p,
            d_found.p, d_dup.p);
        FK_LAUNCHED("k_gather", err);
    } else {
        const int bits = bits_of(span);
        dbuf<uint64_t> kb, ka;
        dbuf<uint32_t> vb, va;
        {
            dbuf<int64_t> ids;
            if (put_ids(ids, b, err) || kb.alloc(nb, err) || vb.alloc(nb, err)) return FK_EDEVICE;
            k_records<<<fk_grid_all(b->nhalo * 32, block), block, 0, cudaStreamPerThread>>>(
                ids.p, hb.first.p, hb.len.p, hb.at.p, nullptr, b->nhalo, lo, 0, kb.p, vb.p);
            FK_LAUNCHED("k_records", err);
        }
        if (nb && sort_records(kb, vb, nb, bits, err)) return FK_EDEVICE;
        k_adjacent<<<fk_grid(nb, block), block, 0, cudaStreamPerThread>>>(kb.p, nb, d_dup.p);
        FK_LAUNCHED("k_adjacent", err);
        if (ha.put(a, only, at_a, err)) return FK_EDEVICE;
        {
            dbuf<int64_t> ids;
            if (put_ids(ids, a, err) || ka.alloc(na, err) || va.alloc(na, err)) return FK_EDEVICE;
            k_records<<<fk_grid_all(a->nhalo * 32, block), block, 0, cudaStreamPerThread>>>(
                ids.p, ha.first.p, ha.len.p, ha.at.p, only ? ha.only.p : nullptr, a->nhalo, lo, 1, ka.p, va.p);
            FK_LAUNCHED("k_records", err);
        }
        if (na && sort_records(ka, va, na, bits, err)) return FK_EDEVICE;
        k_adjacent<<<fk_grid(na, block), block, 0, cudaStreamPerThread>>>(ka.p, na, d_dup.p);
        FK_LAUNCHED("k_adjacent", err);
        k_search<<<fk_grid(na, block), block, 0, cudaStreamPerThread>>>(ka.p, va.p, na, kb.p, vb.p, nb, d_dest.p,
                                                                         d_found.p);
        FK_LAUNCHED("k_search", err);
    }
    unsigned long long found = 0;
    FK_CU(cudaMemcpyAsync(dup, d_dup.p, sizeof(int), cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaMemcpyAsync(&found, d_found.p, sizeof found, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    if (*dup) return FK_OK;
    *shared = found;
    return na ? fk_gpu_get(dest, d_dest.p, na * 4, err) : FK_OK;
}

extern "C" int fk_gpu_mtree_floors(const fk_treecat *a, const fk_treecat *b, double *put_s, double *copy_s,
                                   fk_error *err)
{
    FK_GPU_ENTER(err);
    const uint64_t n = a->nids + b->nids;
    dbuf<int64_t> d, d2;
    if (d.alloc(n, err) || d2.alloc(n, err)) return FK_EDEVICE;
    cudaEvent_t ev[3];
    for (int i = 0; i < 3; i++) FK_CU(cudaEventCreate(&ev[i]), err);
    int st = FK_OK;
    cudaEventRecord(ev[0], cudaStreamPerThread);
    if ((a->nids && fk_gpu_put(d.p, a->ids, a->nids * 8, err)) ||
        (b->nids && fk_gpu_put(d.p + a->nids, b->ids, b->nids * 8, err)))
        st = FK_EDEVICE;
    cudaEventRecord(ev[1], cudaStreamPerThread);
    if (!st) cudaMemcpyAsync(d2.p, d.p, n * 8, cudaMemcpyDeviceToDevice, cudaStreamPerThread);
    cudaEventRecord(ev[2], cudaStreamPerThread);
    cudaError_t e = cudaEventSynchronize(ev[2]);
    float t01 = 0, t12 = 0;
    if (!st && e == cudaSuccess && cudaEventElapsedTime(&t01, ev[0], ev[1]) == cudaSuccess &&
        cudaEventElapsedTime(&t12, ev[1], ev[2]) == cudaSuccess)
        *put_s = t01 / 1e3, *copy_s = t12 / 1e3;
    else if (!st)
        st = fk_fail(err, FK_EDEVICE, "no usable NVIDIA GPU: timing the copies failed (%s)", cudaGetErrorString(e));
    for (int i = 0; i < 3; i++) cudaEventDestroy(ev[i]);
    return st;
}
