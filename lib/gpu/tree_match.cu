/* tree_match.cu - tree_match.c's matching on the GPU: the join (a table indexed by ID, or a hash join in passes), each earlier halo's shares sorted by descendant (CUB's segmented sort) and reduced there; only the links come back. */
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <omp.h>

#include <vector>

#include "clock.h"
#include "common.cuh"
#include "tree_match.h"

/*
 * The three steps of tree_match.h on the device, on the members of A (the
 * earlier catalogue, its halos restricted to only's) and B in place order
 * (each halo's members in its rank order, halo after halo: at_a, at_b).
 * Each member of A becomes one 64-bit key, (its B halo << 32 | its place)
 * (B halo NONE: in no halo of B), in place order, so that
 *   1. the join writes each A member's B halo into its key:
 *      table (A's IDs span at most 2 (na + nb)): A's places scattered into
 *        a table indexed by ID - lo (lo, hi: A's least and largest ID,
 *        found on the device), A's ID buffer then rewritten in place as the
 *        keys; B's members streamed through the bus a window at a time,
 *        each taking its table entry (atomicExch with MARK: a second taker
 *        is an ID twice in B) and writing its halo into that place's key.
 *        B's IDs beyond A's range are gathered and sorted to find an ID
 *        twice among them (more of them than a sixteenth of B: the hash);
 *      hash (scattered IDs): A's IDs kept on the device, each A place a
 *        4-byte claim (B halo, NONE), the IDs joined a pass at a time, a
 *        pass a run of buckets of their hash (the top 12 bits of
 *        MurmurHash3's finaliser; the runs as long as the memory below
 *        allows, from each bucket's count of A's members, on the device,
 *        and of B's, on the host): the pass's A members into an
 *        open-addressing table of places (linear probing, load at most
 *        3/4; a place found with its ID: an ID twice in A), then all of B
 *        streamed through the bus a window at a time, its members of the
 *        pass looking up their ID: a hit claims its place (atomicExch of
 *        its halo: a claim there, an ID twice in B), a miss is listed;
 *        then the pass's misses into the table, emptied, among themselves
 *        (two of one ID: an ID twice among B's members outside A). Last,
 *        A's IDs rewritten as the keys from the claims;
 *   2. each A halo's keys sorted (CUB's segmented sort, on batches of halos
 *      of about a quarter of the members; skipped when every halo's come in
 *      order): by B halo, then place, which is rank order;
 *   3. the links are the runs of one B halo in one A halo: their heads
 *      counted a tile at a time, scanned (CUB) and listed, then a warp a
 *      link counts its members and sums its score in rank order, term by
 *      term as tree_match.c's reduce (the same doubles, bit for bit). The
 *      links come back in batches, sorted by prog then desc.
 * Device memory, the peak by construction (na, nb: members of A and B):
 *   table: max(8 na + 4 span (A's IDs, the table), 8 na + 4 span + nb / 2
 *          + a 256 MiB window (the keys, the table, B's IDs beyond A's),
 *          10 na + na / 8 (the keys, their sort's second buffer a batch of
 *          halos long: a quarter of them, or the longest halo; the halos'
 *          starts)), plus 8 bytes a halo of A and of B and CUB's scratch:
 *          12.5 bytes a particle and the window for Gadget's IDs 1..N when
 *          every particle lies in a halo of each snapshot (na = nb = span),
 *          less when fewer do;
 *   hash:  12 na (A's IDs, then the keys; the claims) + 8 w (B's window,
 *          w = max(4096, min(2^25, max(na, nb) / 32)) IDs: a quarter of a
 *          byte a particle) + 8 bytes a halo of A and of B + the largest
 *          pass's table, 4 (n + n / 3 + 1) + 8 nb_p (n = max(na_p, nb_p):
 *          the pass's members of A and B; the slots, B's misses): the
 *          passes the fewest whose largest keeps the sum within 16 max(na,
 *          nb) (4 or 5 when na = nb = N: a pass's table 13.3 N / P bytes,
 *          3.75 N left for it), then the reduce's 10 na + na / 8 as the
 *          table's: at most 16 bytes a particle of the larger catalogue
 *          (past the fixed 32 KiB of counts and 4096 IDs of window, and
 *          unless its halos' places take more than about 3: then at most
 *          about 16 passes). Through the bus: A's IDs once, B's once a
 *          pass (8 na + 8 P nb: 40 to 48 bytes a particle when na = nb);
 *          on the host, B's IDs read once more for their counts.
 * The ledger below counts them as they come (fk_gpu_mtree_stats: peak).
 * An ID found twice in one catalogue (or nothing in A) sets *cpu and
 * returns no links: tree_match.c's CPU path then joins, and names it.
 */

#define NONE 0xffffffffu
#define MARK 0xfffffffeu /* a table entry taken by a member of B (no place: na <= 2^32 - 2) */
#define NONE_KEY 0xffffffffffffffffull

/* Device arrays counted as they come and go: the peak of their sum. */
struct ledger {
    uint64_t cur = 0, peak = 0;
    template <typename T> int get(dbuf<T> &b, size_t n, fk_error *err)
    {
        if (b.alloc(n, err)) return FK_EDEVICE;
        cur += (n ? n : 1) * sizeof(T);
        if (cur > peak) peak = cur;
        return FK_OK;
    }
    template <typename T> void put(dbuf<T> &b)
    {
        if (b.p) cur -= (b.count ? b.count : 1) * sizeof(T);
        b.release();
    }
};

/* What the last match on this thread did (fk_gpu_mtree_stats). */
static thread_local fk_mtree_gpu_stats last;

/* The halo holding place q: the last h < nh with at[h] <= q. */
__device__ __forceinline__ uint64_t halo_of(const uint64_t *at, uint64_t nh, uint64_t q)
{
    uint64_t lo = 0, hi = nh;
    while (hi - lo > 1) {
        const uint64_t m = lo + (hi - lo) / 2;
        if (at[m] <= q) lo = m; else hi = m;
    }
    return lo;
}

static uint64_t halo_of_host(const uint64_t *at, uint64_t nh, uint64_t q)
{
    uint64_t lo = 0, hi = nh;
    while (hi - lo > 1) {
        const uint64_t m = lo + (hi - lo) / 2;
        if (at[m] <= q) lo = m; else hi = m;
    }
    return lo;
}

/* ---- the members in place order, through the bus ---- */

/* Places a pinned chunk, and B's a device window (the table's 2^25, the
 * hash join's dflt): or fewer, N, with FOFKIT_GPU_TREE_CHUNK=N (the tests'
 * small windows and chunks). */
static uint64_t chunk_ids(uint64_t dflt)
{
    const char *e = getenv("FOFKIT_GPU_TREE_CHUNK");
    const long long n = e ? atoll(e) : 0;
    return n > 0 && (uint64_t)n < dflt ? (uint64_t)n : dflt;
}

/* c's members at places [q0, q1) (at: places()) into dst, on every core:
 * each thread a slice of places, a memcpy a halo. */
static void gather(const fk_treecat *c, const uint64_t *at, uint64_t q0, uint64_t q1, int64_t *dst)
{
    const uint64_t n = q1 - q0;
#pragma omp parallel if (n >= 65536)
    {
        const uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        const uint64_t lo = q0 + n * t / nt, hi = q0 + n * (t + 1) / nt;
        uint64_t h = lo < hi ? halo_of_host(at, c->nhalo, lo) : 0;
        for (uint64_t q = lo; q < hi; h++) {
            const uint64_t end = at[h + 1] < hi ? at[h + 1] : hi;
            if (end > q) {
                memcpy(dst + (q - q0), c->ids + c->first[h] + (q - at[h]), (end - q) * sizeof *dst);
                q = end;
            }
        }
    }
}

/* Places [q0, q1) of c into d_dst on the calling thread's stream, through
 * the two pinned chunks (one filled while the other's DMA runs, from one
 * call to the next too: a window of one chunk); returns once the last
 * chunk is queued. */
static int put_places(const fk_treecat *c, const uint64_t *at, uint64_t q0, uint64_t q1, int64_t *d_dst, fk_error *err)
{
    static thread_local uint64_t turn = 0; /* the chunk the next call fills first */
    fk_stages &s = fk_gpu_stages();
    int st = s.init(err);
    if (st) return st;
    const uint64_t per = chunk_ids(FK_GPU_STAGE / sizeof(int64_t));
    for (uint64_t q = q0, k = turn; q < q1; q += per, k ^= 1, turn = k) {
        const uint64_t len = q1 - q < per ? q1 - q : per;
        FK_CU(cudaEventSynchronize(s.ev[k]), err); /* its last chunk has left */
        gather(c, at, q, q + len, (int64_t *)s.at((int)k));
        FK_CU(cudaMemcpyAsync(d_dst + (q - q0), s.at((int)k), len * sizeof(int64_t), cudaMemcpyHostToDevice,
                              cudaStreamPerThread), err);
        FK_CU(cudaEventRecord(s.ev[k], cudaStreamPerThread), err);
    }
    return FK_OK;
}

/* ---- kernels ---- */

/* The least and largest of v[0..n-1] (as unsigned) into *mn, *mx. */
__global__ void k_range(const uint64_t *v, uint64_t n, unsigned long long *mn, unsigned long long *mx)
{
    unsigned long long l = NONE_KEY, h = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const unsigned long long x = v[i];
        l = x < l ? x : l, h = x > h ? x : h;
    }
    for (int o = 16; o > 0; o /= 2) {
        const unsigned long long lo = __shfl_down_sync(0xffffffffu, l, o), ho = __shfl_down_sync(0xffffffffu, h, o);
        l = lo < l ? lo : l, h = ho > h ? ho : h;
    }
    if ((threadIdx.x & 31) == 0) atomicMin(mn, l), atomicMax(mx, h);
}

/* A's places into the table at ID - lo; an entry taken twice: an ID twice in A. */
__global__ void k_scatter_places(const uint64_t *ids, uint64_t n, uint64_t lo, uint32_t *table, int *dup)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x)
        if (atomicExch(&table[ids[p] - lo], (uint32_t)p) != NONE) *dup = 1;
}

/* Every place's key before the join: (NONE << 32 | place). */
__global__ void k_keys_init(uint64_t *key, uint64_t n)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x)
        key[p] = (uint64_t)NONE << 32 | p;
}

/* B's window of places [q0, q0 + n): each member takes its ID's table entry
 * (MARK) and writes its halo into the key of the A place found there; IDs
 * beyond A's range [lo, lo + range] go to outs (up to cap of them). */
__global__ void k_probe(const uint64_t *w, uint64_t q0, uint64_t n, const uint64_t *at_b, uint64_t nhb, uint64_t lo,
                        uint64_t range, uint32_t *table, uint64_t *key, uint64_t *outs, unsigned long long *nout,
                        uint64_t cap, int *dup)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t v = w[i];
        if (v - lo > range) { /* below lo wraps round */
            const unsigned long long k = atomicAdd(nout, 1ull);
            if (k < cap) outs[k] = v;
            continue;
        }
        const uint32_t p = atomicExch(&table[v - lo], MARK);
        if (p == MARK)
            *dup = 1;
        else if (p != NONE)
            key[p] = (uint64_t)halo_of(at_b, nhb, q0 + i) << 32 | p;
    }
}

__global__ void k_adjacent(const uint64_t *key, uint64_t n, int *dup)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x + 1; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        if (key[i] == key[i - 1]) *dup = 1;
}

/* ---- the hash join (scattered IDs) ----
 * An ID's hash: MurmurHash3's 64-bit finaliser (Appleby; a bijection, so that
 * equal hashes are equal IDs), its top HBITS bits its bucket (a pass is a run
 * of buckets), the rest its home slot in a pass's table (linear probing). */
#define HBITS 12
#define NBUCKET (1u << HBITS)
#define EMPTY 0xffffffffu /* a slot with no reference (a place of A, or a miss of B: < 2^32 - 2) */

__host__ __device__ __forceinline__ uint64_t id_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

__host__ __device__ __forceinline__ uint32_t bucket_of(uint64_t h)
{
    return (uint32_t)(h >> (64 - HBITS));
}

/* The slot in [0, cap) where an ID of hash h starts probing (the bits below its bucket's). */
__device__ __forceinline__ uint64_t home_of(uint64_t h, uint64_t cap)
{
    return __umul64hi(h << HBITS, cap);
}

/* The members of v[0..n-1] a bucket, counted into cnt[NBUCKET]. */
__global__ void k_hist(const uint64_t *v, uint64_t n, unsigned long long *cnt)
{
    __shared__ uint32_t c[NBUCKET];
    for (unsigned k = threadIdx.x; k < NBUCKET; k += blockDim.x) c[k] = 0;
    __syncthreads();
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        atomicAdd(&c[bucket_of(id_hash(v[i]))], 1u);
    __syncthreads();
    for (unsigned k = threadIdx.x; k < NBUCKET; k += blockDim.x)
        if (c[k]) atomicAdd(&cnt[k], (unsigned long long)c[k]);
}

/* ID v (hash h) into the table slot[0..cap-1] as reference ref, its ID
 * keys[ref]: a slot is only ever written once (EMPTY to a reference, by
 * atomicCAS), so that a slot read not EMPTY is final and two references of
 * one ID meet on the slot where the first went: the second compares its ID
 * there and sets *dup. *full: the table wrapped round (never, when sized
 * from the counts). */
__device__ __forceinline__ void insert_ref(const uint64_t *keys, uint32_t ref, uint64_t v, uint64_t h, uint32_t *slot,
                                           uint64_t cap, int *dup, int *full)
{
    uint64_t s = home_of(h, cap);
    for (uint64_t t = 0;; t++) {
        if (t == cap) {
            *full = 1;
            return;
        }
        uint32_t r = ((volatile uint32_t *)slot)[s];
        if (r == EMPTY) {
            r = atomicCAS(&slot[s], EMPTY, ref);
            if (r == EMPTY) return; /* ref's slot */
        }
        if (keys[r] == v) { /* the slot of another reference with v */
            *dup = 1;
            return;
        }
        s = s + 1 == cap ? 0 : s + 1;
    }
}

/* The pass's members of A (IDs ids[0..na-1], buckets [b0, b1)) into the
 * table (EMPTY), each slot a place: two places of one ID set *dup (an ID
 * twice in A). */
__global__ void k_insert_a(const uint64_t *ids, uint64_t na, uint32_t b0, uint32_t b1, uint32_t *slot, uint64_t cap,
                           int *dup, int *full)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < na; p += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t v = ids[p], h = id_hash(v);
        const uint32_t bk = bucket_of(h);
        if (bk >= b0 && bk < b1) insert_ref(ids, (uint32_t)p, v, h, slot, cap, dup, full);
    }
}

/* B's window of places [q0, q0 + n) (IDs w), its members of the pass
 * (buckets [b0, b1)) looked up in the table of A's (read only here): a hit
 * claims its A place, writing its B halo into hal[place] (atomicExch: a
 * claim found there, an ID twice in B, sets *dup); a miss is listed in
 * miss (up to mcap, *nmiss of them) for k_insert_miss. */
__global__ void k_probe_b(const uint64_t *w, uint64_t q0, uint64_t n, const uint64_t *at_b, uint64_t nhb,
                          const uint64_t *ids, const uint32_t *slot, uint64_t cap, uint32_t b0, uint32_t b1,
                          uint32_t *hal, uint64_t *miss, unsigned long long *nmiss, uint64_t mcap, int *dup, int *full)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t v = w[i], h = id_hash(v);
        const uint32_t bk = bucket_of(h);
        if (bk < b0 || bk >= b1) continue;
        uint64_t s = home_of(h, cap);
        for (uint64_t t = 0;; t++) {
            const uint32_t r = t == cap ? EMPTY : slot[s];
            if (r == EMPTY) { /* not in A (or the table full: listed, and *full) */
                const unsigned long long k = atomicAdd(nmiss, 1ull);
                if (k < mcap) miss[k] = v;
                if (k >= mcap || t == cap) *full = 1;
                break;
            }
            if (ids[r] == v) {
                if (atomicExch(&hal[r], (uint32_t)halo_of(at_b, nhb, q0 + i)) != NONE) *dup = 1;
                break;
            }
            s = s + 1 == cap ? 0 : s + 1;
        }
    }
}

/* The pass's misses of B (miss[0..*nmiss-1], at most mcap) into the table
 * (EMPTY again), each slot an index into miss, as k_insert_a: two of one ID,
 * an ID twice among B's members that are not in A, set *dup. */
__global__ void k_insert_miss(const uint64_t *miss, const unsigned long long *nmiss, uint64_t mcap, uint32_t *slot,
                              uint64_t cap, int *dup, int *full)
{
    const uint64_t nm = *nmiss < mcap ? *nmiss : mcap;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nm; k += (uint64_t)gridDim.x * blockDim.x)
        insert_ref(miss, (uint32_t)k, miss[k], id_hash(miss[k]), slot, cap, dup, full);
}

/* The keys from the claims, over A's IDs: key[p] = hal[p] << 32 | p. */
__global__ void k_keys_of(uint64_t *key, const uint32_t *hal, uint64_t n)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x)
        key[p] = (uint64_t)hal[p] << 32 | p;
}

/* A bit at each non-empty halo's first place: where its segment starts. */
__global__ void k_starts(const uint64_t *at, uint64_t nh, uint32_t *bits)
{
    for (uint64_t h = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; h < nh; h += (uint64_t)gridDim.x * blockDim.x)
        if (at[h + 1] > at[h]) atomicOr(&bits[at[h] >> 5], 1u << (at[h] & 31));
}

/* A batch of halos' places from its first: offs[k] = at[k] - at[0], n of them. */
__global__ void k_offsets(const uint64_t *at, uint64_t n, uint64_t *offs)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (uint64_t)gridDim.x * blockDim.x)
        offs[k] = at[k] - at[0];
}

__device__ __forceinline__ bool starts(const uint32_t *bits, uint64_t i)
{
    return (bits[i >> 5] >> (i & 31)) & 1u;
}

/* Some halo's keys out of order (a B halo below the one before it). */
__global__ void k_unsorted(const uint64_t *key, const uint32_t *bits, uint64_t n, int *flag)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x + 1; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        if (!starts(bits, i) && (key[i] >> 32) < (key[i - 1] >> 32)) *flag = 1;
}

/* The heads of the links: the first key of each run of one B halo (not
 * NONE) in one A halo. A tile of TILE keys a block, ITEMS a thread in
 * order; pass 0 counts each tile's, pass 1 lists them at the tile's offset. */
#define THREADS 256
#define ITEMS 16
#define TILE (THREADS * ITEMS)

template <int PASS>
__global__ void __launch_bounds__(THREADS) k_heads(const uint64_t *key, const uint32_t *bits, uint64_t n,
                                                   uint64_t *tilecnt, const uint64_t *tileoff, uint32_t *heads)
{
    typedef cub::BlockScan<uint32_t, THREADS> scan;
    __shared__ typename scan::TempStorage tmp;
    const uint64_t i0 = (uint64_t)blockIdx.x * TILE + (uint64_t)threadIdx.x * ITEMS;
    uint32_t prev = i0 > 0 && i0 < n ? (uint32_t)(key[i0 - 1] >> 32) : NONE, flags = 0, cnt = 0;
    for (int u = 0; u < ITEMS; u++) {
        const uint64_t i = i0 + u;
        if (i >= n) break;
        const uint32_t d = (uint32_t)(key[i] >> 32);
        if (d != NONE && (d != prev || starts(bits, i))) flags |= 1u << u, cnt++;
        prev = d;
    }
    uint32_t off, total;
    scan(tmp).ExclusiveSum(cnt, off, total);
    if (PASS == 0) {
        if (threadIdx.x == 0) tilecnt[blockIdx.x] = total;
        return;
    }
    uint64_t o = tileoff[blockIdx.x] + off;
    for (int u = 0; u < ITEMS; u++)
        if ((flags >> u) & 1u) heads[o++] = (uint32_t)(i0 + u);
}

/* A warp a link k in [k0, k1): its run from heads[k] (the B halo's members,
 * then at most the A halo's NONE tail, up to the next head or the halo's
 * end), counted and its score summed in place order, which is rank order:
 * the lanes make the terms 1/rank, lane q's added q-th, so that the sum is
 * the CPU's, term by term. */
#define UNROLL 8
__global__ void k_links(const uint64_t *key, const uint32_t *heads, uint64_t nl, uint64_t k0, uint64_t k1,
                        const uint64_t *at, uint64_t nh, int by_rank, fk_treelink *out)
{
    const uint64_t k = k0 + ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (k >= k1) return;
    const unsigned lane = threadIdx.x & 31;
    const uint64_t i0 = heads[k], key0 = key[i0];
    const uint32_t d = (uint32_t)(key0 >> 32);
    const uint64_t h = halo_of(at, nh, (uint32_t)key0), base = at[h];
    uint64_t lim = at[h + 1];
    if (k + 1 < nl && heads[k + 1] < lim) lim = heads[k + 1];
    uint64_t count = 0;
    double s = 0;
    for (uint64_t i = i0; i < lim; i += 32 * UNROLL) {
        uint64_t kv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t j = i + (uint64_t)u * 32 + lane;
            kv[u] = j < lim ? key[j] : NONE_KEY;
        }
        bool stop = false;
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const bool mine = (uint32_t)(kv[u] >> 32) == d;
            const unsigned c = __popc(__ballot_sync(0xffffffffu, mine)); /* the run's members: a prefix */
            if (by_rank) {
                const double t = mine ? 1.0 / (double)((uint32_t)kv[u] - base + 1) : 0.0;
                for (unsigned q = 0; q < c; q++) s += __shfl_sync(0xffffffffu, t, q);
            }
            count += c;
            if (c < 32) {
                stop = true;
                break;
            }
        }
        if (stop) break;
    }
    if (!by_rank) s = (double)count; /* 1 added count times: exact */
    if (lane == 0) {
        fk_treelink l;
        l.prog = (uint32_t)h, l.desc = d, l.count = count, l.score = s;
        out[k - k0] = l;
    }
}

/* ---- steps ---- */

struct run {
    ledger mem;
    uint64_t up = 0, moved = 0, down = 0;
};

static int flag_of(const dbuf<int> &f, int *v, fk_error *err)
{
    FK_CU(cudaMemcpyAsync(v, f.p, sizeof(int), cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    return FK_OK;
}

static int range_of(run &r, const uint64_t *v, uint64_t n, uint64_t *lo, uint64_t *hi, fk_error *err)
{
    dbuf<unsigned long long> m;
    if (r.mem.get(m, 2, err)) return FK_EDEVICE;
    const unsigned long long init[2] = {NONE_KEY, 0};
    FK_CU(cudaMemcpyAsync(m.p, init, sizeof init, cudaMemcpyHostToDevice, cudaStreamPerThread), err);
    k_range<<<fk_grid(n, 256), 256, 0, cudaStreamPerThread>>>(v, n, m.p, m.p + 1);
    FK_LAUNCHED("k_range", err);
    unsigned long long got[2];
    FK_CU(cudaMemcpyAsync(got, m.p, sizeof got, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    r.mem.put(m);
    r.moved += n * 8;
    *lo = got[0], *hi = got[1];
    return FK_OK;
}


/* Step 1 by the table: key (A's IDs on entry, na of them, IDs in [lo, hi])
 * rewritten as the keys. *redo: too many of B's IDs beyond A's range to
 * check here (the hash join then). */
static int join_table(run &r, dbuf<uint64_t> &key, uint64_t na, uint64_t lo, uint64_t hi, const fk_treecat *b,
                      const uint64_t *at_b, const dbuf<uint64_t> &d_at_b, dbuf<int> &dup, int *redo, fk_error *err)
{
    const uint64_t nb = at_b[b->nhalo], span = hi - lo + 1;
    dbuf<uint32_t> table;
    if (r.mem.get(table, span, err)) return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(table.p, 0xff, span * 4, cudaStreamPerThread), err);
    k_scatter_places<<<fk_grid(na, 256), 256, 0, cudaStreamPerThread>>>(key.p, na, lo, table.p, dup.p);
    FK_LAUNCHED("k_scatter_places", err);
    k_keys_init<<<fk_grid(na, 256), 256, 0, cudaStreamPerThread>>>(key.p, na);
    FK_LAUNCHED("k_keys_init", err);
    r.moved += span * 4 + na * (8 + 8 + 8);
    const uint64_t cap = nb / 16 + 4096, window = chunk_ids((uint64_t)1 << 25);
    dbuf<uint64_t> win, outs;
    dbuf<unsigned long long> nout;
    const uint64_t wn = nb < window ? nb : window;
    if (r.mem.get(win, wn, err) || r.mem.get(outs, cap, err) || r.mem.get(nout, 1, err)) return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(nout.p, 0, sizeof(unsigned long long), cudaStreamPerThread), err);
    for (uint64_t q = 0; q < nb; q += window) {
        const uint64_t n = nb - q < window ? nb - q : window;
        if (put_places(b, at_b, q, q + n, (int64_t *)win.p, err)) return FK_EDEVICE;
        k_probe<<<fk_grid(n, 256), 256, 0, cudaStreamPerThread>>>(win.p, q, n, d_at_b.p, b->nhalo, lo, hi - lo,
                                                                   table.p, key.p, outs.p, nout.p, cap, dup.p);
        FK_LAUNCHED("k_probe", err);
    }
    r.up += nb * 8;
    r.moved += nb * (8 + 8 + 8);
    unsigned long long nfar = 0;
    FK_CU(cudaMemcpyAsync(&nfar, nout.p, sizeof nfar, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    r.mem.put(win), r.mem.put(table);
    if (nfar > cap) {
        *redo = 1;
        return FK_OK;
    }
    if (nfar > 1) { /* B's IDs beyond A's: one of them twice? */
        dbuf<uint64_t> alt;
        if (r.mem.get(alt, nfar, err)) return FK_EDEVICE;
        cub::DoubleBuffer<uint64_t> kd(outs.p, alt.p);
        size_t bytes = 0;
        FK_CU(cub::DeviceRadixSort::SortKeys(nullptr, bytes, kd, (int64_t)nfar, 0, 64, cudaStreamPerThread), err);
        dbuf<unsigned char> tmp;
        if (r.mem.get(tmp, bytes, err)) return FK_EDEVICE;
        FK_CU(cub::DeviceRadixSort::SortKeys(tmp.p, bytes, kd, (int64_t)nfar, 0, 64, cudaStreamPerThread), err);
        k_adjacent<<<fk_grid(nfar, 256), 256, 0, cudaStreamPerThread>>>(kd.Current(), nfar, dup.p);
        FK_LAUNCHED("k_adjacent", err);
        r.moved += nfar * 8 * 16 + nfar * 8;
        r.mem.put(tmp), r.mem.put(alt);
    }
    r.mem.put(outs), r.mem.put(nout);
    return FK_OK;
}

/* B's members a bucket (of its IDs' hashes), counted on every core: each
 * thread a slice of places, as gather. */
static void hist_host(const fk_treecat *c, const uint64_t *at, uint64_t *cnt)
{
    const uint64_t n = at[c->nhalo];
    memset(cnt, 0, NBUCKET * sizeof *cnt);
#pragma omp parallel if (n >= 65536)
    {
        uint64_t mine[NBUCKET] = {0};
        const uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        uint64_t h = lo < hi ? halo_of_host(at, c->nhalo, lo) : 0;
        for (uint64_t q = lo; q < hi; h++) {
            const uint64_t end = at[h + 1] < hi ? at[h + 1] : hi;
            if (end <= q) continue;
            const int64_t *id = c->ids + c->first[h] + (q - at[h]);
            for (; q < end; q++) mine[bucket_of(id_hash((uint64_t)*id++))]++;
        }
#pragma omp critical
        for (unsigned k = 0; k < NBUCKET; k++) cnt[k] += mine[k];
    }
}

/* A pass of the hash join: buckets [b0, b1), A's and B's members there. */
struct pass {
    uint32_t b0, b1;
    uint64_t na, nb;
};

/* A pass's table: slots for the larger of its A's and B's members at a load
 * of at most 3/4 (4 bytes each), then B's misses (8 bytes each): words of 8 bytes. */
static uint64_t slots_for(const pass &p)
{
    const uint64_t n = p.na > p.nb ? p.na : p.nb;
    return n + n / 3 + 1;
}

static uint64_t words_for(const pass &p)
{
    return (slots_for(p) + 1) / 2 + p.nb;
}

/* The passes: FOFKIT_GPU_TREE_PASSES=N (the tests' many passes) N runs of
 * buckets of one length, else the fewest runs, each as long as its table
 * keeps within budget bytes (greedy: a run ends where the next bucket would
 * take it past; one bucket a run at least). */
static std::vector<pass> plan(const uint64_t *ca, const uint64_t *cb, uint64_t budget)
{
    std::vector<pass> ps;
    const char *e = getenv("FOFKIT_GPU_TREE_PASSES");
    long long forced = e ? atoll(e) : 0;
    if (forced > NBUCKET) forced = NBUCKET;
    for (uint32_t b0 = 0, k = 0; b0 < NBUCKET; k++) {
        pass p = {b0, b0, 0, 0};
        const uint32_t end = forced > 0 ? (uint32_t)((uint64_t)NBUCKET * (k + 1) / (uint64_t)forced) : NBUCKET;
        while (p.b1 < end) {
            pass q = p;
            q.na += ca[q.b1], q.nb += cb[q.b1], q.b1++;
            if (forced <= 0 && p.b1 > p.b0 && words_for(q) * 8 > budget) break;
            p = q;
        }
        ps.push_back(p);
        b0 = p.b1;
    }
    return ps;
}

/* Step 1 by the hash join (scattered IDs): key (A's IDs on entry, na of
 * them) rewritten as the keys. A's IDs stay on the device and each A place
 * a 4-byte claim (its B halo, NONE); the IDs are joined a pass at a time,
 * by buckets of their hash: the pass's A members into a table of places,
 * then B streamed through the bus a window at a time, its members of the
 * pass claiming their A places (or listed as misses), then the misses in
 * the table (emptied) among themselves. *passes: how many. */
static int join_hash(run &r, dbuf<uint64_t> &key, uint64_t na, const fk_treecat *b, const uint64_t *at_b,
                     const dbuf<uint64_t> &d_at_b, dbuf<int> &dup, int *passes, fk_error *err)
{
    const uint64_t nb = at_b[b->nhalo], nmax = na > nb ? na : nb;
    std::vector<uint64_t> ca(NBUCKET), cb(NBUCKET);
    {
        dbuf<unsigned long long> cnt;
        if (r.mem.get(cnt, NBUCKET, err)) return FK_EDEVICE;
        FK_CU(cudaMemsetAsync(cnt.p, 0, NBUCKET * sizeof(unsigned long long), cudaStreamPerThread), err);
        unsigned g = fk_grid(na, 256);
        k_hist<<<g < 1024 ? g : 1024, 256, 0, cudaStreamPerThread>>>(key.p, na, cnt.p);
        FK_LAUNCHED("k_hist", err);
        hist_host(b, at_b, cb.data()); /* while the device counts A's */
        FK_CU(cudaMemcpyAsync(ca.data(), cnt.p, NBUCKET * sizeof(uint64_t), cudaMemcpyDeviceToHost, cudaStreamPerThread),
              err);
        FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
        r.mem.put(cnt);
        r.moved += na * 8;
        r.down += NBUCKET * 8;
    }
    dbuf<uint32_t> hal;
    dbuf<uint64_t> win, tab;
    dbuf<unsigned long long> nmiss;
    dbuf<int> full;
    uint64_t window = nmax / 32;
    if (window > ((uint64_t)1 << 25)) window = (uint64_t)1 << 25;
    if (window < 4096) window = 4096;
    window = chunk_ids(window);
    const uint64_t wn = nb < window ? nb : window;
    if (r.mem.get(hal, na, err) || r.mem.get(win, wn, err) || r.mem.get(nmiss, 1, err) || r.mem.get(full, 1, err))
        return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(hal.p, 0xff, na * 4, cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(full.p, 0, sizeof(int), cudaStreamPerThread), err);
    r.moved += na * 4;
    /* the passes: the table of each within 16 bytes a member of the larger
     * catalogue, less what is held; at most about 16 passes when that is
     * nothing (halos' places of many tiny halos) */
    pass all = {0, NBUCKET, 0, 0};
    for (unsigned k = 0; k < NBUCKET; k++) all.na += ca[k], all.nb += cb[k];
    uint64_t budget = 16 * nmax > r.mem.cur ? 16 * nmax - r.mem.cur : 0;
    if (budget < words_for(all) / 2) budget = words_for(all) / 2; /* a sixteenth of one pass's bytes */
    const std::vector<pass> ps = plan(ca.data(), cb.data(), budget);
    uint64_t words = 1;
    for (const pass &p : ps)
        if (words_for(p) > words) words = words_for(p);
    if (r.mem.get(tab, words, err)) return FK_EDEVICE;
    *passes = (int)ps.size();
    for (const pass &p : ps) {
        if (p.na + p.nb == 0) continue;
        const uint64_t cap = slots_for(p);
        uint32_t *slot = (uint32_t *)tab.p;
        uint64_t *miss = tab.p + (cap + 1) / 2;
        FK_CU(cudaMemsetAsync(slot, 0xff, cap * 4, cudaStreamPerThread), err);
        r.moved += cap * 4;
        if (p.na) {
            k_insert_a<<<fk_grid(na, 256), 256, 0, cudaStreamPerThread>>>(key.p, na, p.b0, p.b1, slot, cap, dup.p,
                                                                          full.p);
            FK_LAUNCHED("k_insert_a", err);
            r.moved += na * 8 + p.na * (4 + 8 + 4); /* A's IDs; a slot, an ID and the place a member */
        }
        if (p.nb) {
            FK_CU(cudaMemsetAsync(nmiss.p, 0, sizeof(unsigned long long), cudaStreamPerThread), err);
            for (uint64_t q = 0; q < nb; q += window) {
                const uint64_t n = nb - q < window ? nb - q : window;
                if (put_places(b, at_b, q, q + n, (int64_t *)win.p, err)) return FK_EDEVICE;
                k_probe_b<<<fk_grid(n, 256), 256, 0, cudaStreamPerThread>>>(win.p, q, n, d_at_b.p, b->nhalo, key.p,
                                                                            slot, cap, p.b0, p.b1, hal.p, miss,
                                                                            nmiss.p, p.nb, dup.p, full.p);
                FK_LAUNCHED("k_probe_b", err);
            }
            r.up += nb * 8;
            r.moved += nb * (8 + 8) + p.nb * (4 + 8 + 4 + 8); /* the window in and out; a slot, an ID, a
                                                                 claim or a miss a member */
            FK_CU(cudaMemsetAsync(slot, 0xff, cap * 4, cudaStreamPerThread), err);
            k_insert_miss<<<fk_grid(p.nb, 256), 256, 0, cudaStreamPerThread>>>(miss, nmiss.p, p.nb, slot, cap, dup.p,
                                                                               full.p);
            FK_LAUNCHED("k_insert_miss", err);
            r.moved += cap * 4 + p.nb * (8 + 4 + 8);
        }
    }
    k_keys_of<<<fk_grid(na, 256), 256, 0, cudaStreamPerThread>>>(key.p, hal.p, na);
    FK_LAUNCHED("k_keys_of", err);
    r.moved += na * (4 + 8);
    int f = 0;
    if (flag_of(full, &f, err)) return FK_EDEVICE;
    r.mem.put(tab), r.mem.put(full), r.mem.put(nmiss), r.mem.put(win), r.mem.put(hal);
    if (f)
        return fk_fail(err, FK_EDEVICE, "the GPU's ID join overflowed its hash table, sized from its counts (%d passes)",
                       (int)ps.size());
    return FK_OK;
}

/* Steps 2 and 3 on the keys (na of them, A's halos' places at, on the
 * device d_at): the links into *links (malloc'd), *nlinks. */
static int reduce(run &r, dbuf<uint64_t> &key, uint64_t na, const uint64_t *at, const dbuf<uint64_t> &d_at, uint64_t nh,
                  int weight, fk_treelink **links, uint64_t *nlinks, double *t_sort, fk_error *err)
{
    const unsigned block = 256;
    dbuf<uint32_t> bits;
    dbuf<int> unsorted;
    const uint64_t words = na / 32 + 1;
    if (r.mem.get(bits, words, err) || r.mem.get(unsorted, 1, err)) return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(bits.p, 0, words * 4, cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(unsorted.p, 0, sizeof(int), cudaStreamPerThread), err);
    k_starts<<<fk_grid(nh, block), block, 0, cudaStreamPerThread>>>(d_at.p, nh, bits.p);
    FK_LAUNCHED("k_starts", err);
    k_unsorted<<<fk_grid(na, block), block, 0, cudaStreamPerThread>>>(key.p, bits.p, na, unsorted.p);
    FK_LAUNCHED("k_unsorted", err);
    r.moved += nh * 16 + na * 8;
    int any = 0;
    if (flag_of(unsorted, &any, err)) return FK_EDEVICE;
    double w = fk_now();
    last.segsort = any;
    if (any) { /* 2. each A halo's keys by B halo, then place: halos a batch of about a
                  quarter of the members (the sort's second buffer that long), each batch
                  with its offsets from its first member */
        const uint64_t target = na / 4 + 1;
        uint64_t longest = 0, most = 0;
        size_t bytes = 0;
        for (uint64_t h0 = 0, h1; h0 < nh; h0 = h1) {
            for (h1 = h0 + 1; h1 < nh && at[h1 + 1] - at[h0] <= target;) h1++;
            const uint64_t n = at[h1] - at[h0];
            if (n > longest) longest = n;
            if (h1 - h0 > most) most = h1 - h0;
            size_t b = 0;
            cub::DoubleBuffer<uint64_t> kd(key.p, key.p);
            FK_CU(cub::DeviceSegmentedSort::SortKeys(nullptr, b, kd, (int64_t)n, (int64_t)(h1 - h0), d_at.p, d_at.p + 1,
                                                     cudaStreamPerThread), err);
            if (b > bytes) bytes = b;
        }
        dbuf<uint64_t> alt, offs;
        dbuf<unsigned char> tmp;
        if (r.mem.get(alt, longest, err) || r.mem.get(offs, most + 1, err) || r.mem.get(tmp, bytes, err))
            return FK_EDEVICE;
        for (uint64_t h0 = 0, h1; h0 < nh; h0 = h1) {
            for (h1 = h0 + 1; h1 < nh && at[h1 + 1] - at[h0] <= target;) h1++;
            const uint64_t n = at[h1] - at[h0];
            if (n < 2) continue;
            k_offsets<<<fk_grid(h1 - h0 + 1, block), block, 0, cudaStreamPerThread>>>(d_at.p + h0, h1 - h0 + 1, offs.p);
            FK_LAUNCHED("k_offsets", err);
            cub::DoubleBuffer<uint64_t> kd(key.p + at[h0], alt.p);
            size_t b = bytes;
            FK_CU(cub::DeviceSegmentedSort::SortKeys(tmp.p, b, kd, (int64_t)n, (int64_t)(h1 - h0), offs.p, offs.p + 1,
                                                     cudaStreamPerThread), err);
            if (kd.Current() != key.p + at[h0]) {
                FK_CU(cudaMemcpyAsync(key.p + at[h0], alt.p, n * 8, cudaMemcpyDeviceToDevice, cudaStreamPerThread), err);
                r.moved += n * 16;
            }
            r.moved += n * 16 + (h1 - h0) * 16; /* at least a read and a write of the keys */
        }
        r.mem.put(tmp), r.mem.put(offs), r.mem.put(alt);
        FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    }
    *t_sort = fk_now() - w;
    /* 3. the heads of the links, counted a tile at a time and listed in order */
    const uint64_t tiles = (na + TILE - 1) / TILE;
    dbuf<uint64_t> cnt, off;
    if (r.mem.get(cnt, tiles, err) || r.mem.get(off, tiles, err)) return FK_EDEVICE;
    k_heads<0><<<(unsigned)tiles, THREADS, 0, cudaStreamPerThread>>>(key.p, bits.p, na, cnt.p, nullptr, nullptr);
    FK_LAUNCHED("k_heads", err);
    {
        size_t bytes = 0;
        FK_CU(cub::DeviceScan::ExclusiveSum(nullptr, bytes, cnt.p, off.p, (int64_t)tiles, cudaStreamPerThread), err);
        dbuf<unsigned char> tmp;
        if (r.mem.get(tmp, bytes, err)) return FK_EDEVICE;
        FK_CU(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, cnt.p, off.p, (int64_t)tiles, cudaStreamPerThread), err);
        r.mem.put(tmp);
    }
    uint64_t lastc = 0, lasto = 0;
    FK_CU(cudaMemcpyAsync(&lastc, cnt.p + tiles - 1, 8, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaMemcpyAsync(&lasto, off.p + tiles - 1, 8, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    const uint64_t nl = lasto + lastc;
    dbuf<uint32_t> heads;
    if (r.mem.get(heads, nl, err)) return FK_EDEVICE;
    k_heads<1><<<(unsigned)tiles, THREADS, 0, cudaStreamPerThread>>>(key.p, bits.p, na, nullptr, off.p, heads.p);
    FK_LAUNCHED("k_heads", err);
    r.moved += 2 * (na * 8 + words * 4) + nl * 4;
    fk_treelink *out = (fk_treelink *)malloc((nl ? nl : 1) * sizeof *out);
    if (!out) return fk_fail(err, FK_ENOMEM, "out of memory for %llu links", (unsigned long long)nl);
    /* the links a batch at a time, each brought back */
    const uint64_t batch = (uint64_t)1 << 24;
    dbuf<fk_treelink> dl;
    if (nl && r.mem.get(dl, nl < batch ? nl : batch, err)) {
        free(out);
        return FK_EDEVICE;
    }
    for (uint64_t k0 = 0; k0 < nl; k0 += batch) {
        const uint64_t k1 = nl - k0 < batch ? nl : k0 + batch;
        k_links<<<fk_grid_all((k1 - k0) * 32, block), block, 0, cudaStreamPerThread>>>(
            key.p, heads.p, nl, k0, k1, d_at.p, nh, weight == FK_TREE_WEIGHT_RANK, dl.p);
        cudaError_t e = cudaPeekAtLastError();
        if (e == cudaSuccess && fk_gpu_get(out + k0, dl.p, (k1 - k0) * sizeof *out, err) == FK_OK) continue;
        free(out);
        return e == cudaSuccess ? FK_EDEVICE
                                : fk_fail(err, FK_EDEVICE, "no usable NVIDIA GPU: k_links failed, CUDA says '%s'",
                                          cudaGetErrorString(e));
    }
    r.down += nl * sizeof *out;
    r.moved += nl * (8 + sizeof *out) + na * 8;
    *links = out, *nlinks = nl;
    return FK_OK;
}

extern "C" void fk_gpu_mtree_stats(fk_mtree_gpu_stats *s)
{
    *s = last;
}

extern "C" int fk_gpu_mtree_match(const fk_treecat *a, const uint64_t *at_a, const fk_treecat *b, const uint64_t *at_b,
                                  int weight, fk_treelink **links, uint64_t *nlinks, int *cpu, fk_error *err)
{
    FK_GPU_ENTER(err);
    const double t0 = fk_now();
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo];
    *links = NULL, *nlinks = 0, *cpu = 0;
    memset(&last, 0, sizeof last);
    if (na == 0 || nb == 0) { /* nothing to link: the CPU checks B for an ID twice */
        *cpu = 1;
        return FK_OK;
    }
    if (na > NONE - 2 || nb > NONE - 2)
        return fk_fail(err, FK_EINVAL, "more than 2^32 - 3 members of one catalogue to match on the GPU");
    run r;
    int path = 1;
    for (;;) { /* the table, or the hash join (path 2) */
        r.mem.cur = 0; /* nothing held: the last try's buffers went with it */
        dbuf<uint64_t> d_at_a, d_at_b, key;
        dbuf<int> dup;
        if (r.mem.get(d_at_a, a->nhalo + 1, err) || r.mem.get(d_at_b, b->nhalo + 1, err) || r.mem.get(dup, 1, err))
            return FK_EDEVICE;
        FK_CU(cudaMemsetAsync(dup.p, 0, sizeof(int), cudaStreamPerThread), err);
        if (fk_gpu_put(d_at_a.p, at_a, (a->nhalo + 1) * 8, err) || fk_gpu_put(d_at_b.p, at_b, (b->nhalo + 1) * 8, err))
            return FK_EDEVICE;
        r.up += (a->nhalo + b->nhalo + 2) * 8;
        /* A's IDs in place order, their range */
        if (r.mem.get(key, na, err) || put_places(a, at_a, 0, na, (int64_t *)key.p, err)) return FK_EDEVICE;
        r.up += na * 8;
        uint64_t lo = 0, hi = 0;
        if (range_of(r, key.p, na, &lo, &hi, err)) return FK_EDEVICE;
        if (path == 1 && hi - lo >= 2 * (na + nb)) path = 2;
        int redo = 0, d = 0;
        if (path == 1) {
            if (join_table(r, key, na, lo, hi, b, at_b, d_at_b, dup, &redo, err)) return FK_EDEVICE;
            if (redo) {
                path = 2;
                continue;
            }
        } else if (join_hash(r, key, na, b, at_b, d_at_b, dup, &last.passes, err))
            return FK_EDEVICE;
        if (flag_of(dup, &d, err)) return FK_EDEVICE;
        const double t1 = fk_now();
        last.t_join = t1 - t0;
        if (d) { /* an ID twice: the CPU names it */
            *cpu = 1;
            break;
        }
        r.mem.put(d_at_b);
        if (reduce(r, key, na, at_a, d_at_a, a->nhalo, weight, links, nlinks, &last.t_sort, err)) return FK_EDEVICE;
        last.t_links = fk_now() - t1 - last.t_sort;
        break;
    }
    last.path = path;
    last.up = r.up, last.down = r.down, last.moved = r.moved, last.peak = r.mem.peak;
    last.members = na + nb;
    return FK_OK;
}

extern "C" int fk_gpu_mtree_floors(const fk_treecat *a, const fk_treecat *b, uint64_t moved, double *put_s,
                                   double *copy_s, fk_error *err)
{
    FK_GPU_ENTER(err);
    /* the inputs through the bus: both ID arrays, as fk_gpu_put moves them */
    const uint64_t n = a->nids + b->nids;
    double w;
    {
        dbuf<int64_t> d;
        if (d.alloc(n, err)) return FK_EDEVICE;
        FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
        w = fk_now();
        if ((a->nids && fk_gpu_put(d.p, a->ids, a->nids * 8, err)) ||
            (b->nids && fk_gpu_put(d.p + a->nids, b->ids, b->nids * 8, err)))
            return FK_EDEVICE;
        *put_s = fk_now() - w;
    }
    /* the device's memory: copies reading and writing moved bytes in all,
     * between two buffers of up to 4 GiB each, over and over */
    uint64_t half = moved / 2, size = half < ((uint64_t)4 << 30) ? half : ((uint64_t)4 << 30);
    if (size < 8) size = 8;
    dbuf<unsigned char> x, y;
    if (x.alloc(size, err) || y.alloc(size, err)) return FK_EDEVICE;
    FK_CU(cudaMemsetAsync(x.p, 1, size, cudaStreamPerThread), err);
    FK_CU(cudaMemcpyAsync(y.p, x.p, size, cudaMemcpyDeviceToDevice, cudaStreamPerThread), err); /* warm */
    cudaEvent_t ev[2];
    for (int i = 0; i < 2; i++) FK_CU(cudaEventCreate(&ev[i]), err);
    cudaEventRecord(ev[0], cudaStreamPerThread);
    cudaError_t e = cudaSuccess;
    for (uint64_t done = 0, k = 0; done < half && e == cudaSuccess; k++) {
        const uint64_t len = half - done < size ? half - done : size;
        e = cudaMemcpyAsync(k & 1 ? x.p : y.p, k & 1 ? y.p : x.p, len, cudaMemcpyDeviceToDevice, cudaStreamPerThread);
        done += len;
    }
    cudaEventRecord(ev[1], cudaStreamPerThread);
    if (e == cudaSuccess) e = cudaEventSynchronize(ev[1]);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
    for (int i = 0; i < 2; i++) cudaEventDestroy(ev[i]);
    if (e != cudaSuccess)
        return fk_fail(err, FK_EDEVICE, "no usable NVIDIA GPU: timing the copies failed (%s)", cudaGetErrorString(e));
    *copy_s = ms / 1e3;
    return FK_OK;
}
