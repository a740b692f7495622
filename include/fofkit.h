/* fofkit.h - the fofkit library's public interface: friends-of-friends groups and halo properties of particle arrays in memory, on the CPU or a GPU. */
#ifndef FOFKIT_H
#define FOFKIT_H

/*
 * The whole public contract of libfofkit (fofkit(3)). Every other header of
 * the fofkit sources is internal and may change in any release.
 *
 * Conventions:
 *   - Every call returns FOFKIT_OK (0) or a negative FOFKIT_E* code and,
 *     given a fofkit_error, fills it with a one-line message naming the
 *     problem. The library never prints and never exits.
 *   - No global state: calls may run at once from several threads. Each
 *     call uses its own OpenMP threads (nthreads, or the calling thread's
 *     OpenMP default).
 *   - Structs that may grow start with a size field: set it with the _init
 *     function (which also sets the defaults), so that a program built
 *     against this header keeps working with a later library.
 *   - Arrays: positions and velocities are float32, n x 3, row after row
 *     (x y z of particle 0, then of particle 1, ...); masses float32, n.
 *     In a build with CUDA they may also be device pointers (arrays already
 *     on a GPU: cudaPointerGetAttributes tells them apart); the outputs are
 *     host memory, but for fofkit_fof's group arrays, which may be on the
 *     GPU the call links on.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FOFKIT_VERSION_MAJOR 0
#define FOFKIT_VERSION_MINOR 1
#define FOFKIT_VERSION_PATCH 0
#define FOFKIT_VERSION_STRING "0.1.0"

/* The library's version as a string ("0.1.0"): the one linked, which may be
 * later than the header's. */
const char *fofkit_version(void);

/* Status codes (the same numbers as the programs' library uses). */
enum {
    FOFKIT_OK = 0,
    FOFKIT_EIO = -1,      /* reading or writing failed                         */
    FOFKIT_EFORMAT = -2,  /* the data are not what they must be (NaN, outside the box) */
    FOFKIT_EINVAL = -3,   /* an argument is out of range or missing             */
    FOFKIT_ENOMEM = -4,   /* out of memory                                      */
    FOFKIT_EDEVICE = -6,  /* no usable GPU, a GPU failure, or too little GPU memory */
    FOFKIT_EUNSUP = -7    /* valid, but not supported by this build or these sizes */
};

typedef struct fofkit_error {
    int code;          /* the status returned                       */
    char message[512]; /* one line, no trailing newline; "" on success */
} fofkit_error;

/* A short name for a status code ("invalid argument", ...); never NULL. */
const char *fofkit_strerror(int code);

enum { FOFKIT_DEVICE_AUTO = 0, FOFKIT_DEVICE_CPU = 1, FOFKIT_DEVICE_GPU = 2 };

/* 1 when this build of the library has the CUDA backend. */
int fofkit_has_gpu_backend(void);

#define FOFKIT_LEVELS_MAX 8

/* ---- particles ---- */

typedef struct fofkit_particles {
    size_t size;       /* sizeof(fofkit_particles), set by fofkit_particles_init */
    uint64_t n;        /* particles, below 2^32                                  */
    const float *pos;  /* n x 3, finite                                          */
    const float *vel;  /* n x 3, or NULL (needed by 6D linking and halos)        */
    const float *mass; /* n, or NULL: every mass 1                               */
    const uint64_t *ids; /* n, or NULL: each particle's index. fofkit_halos names
                          particles by them (minid, mbp_id, the reference member
                          of a group: the least id); fofkit_fof_mpi needs them
                          unique over the ranks (NULL: the ranks' particles
                          numbered in rank order). fofkit_fof numbers by index. */
    int periodic;      /* positions lie in [origin, origin + box) on every axis   */
    double box;        /* the side of the box: the period, and with b the volume
                          box^3 that gives the mean spacing; 0 when none          */
    double origin;     /* the box's lower corner on every axis                   */
} fofkit_particles;

/* Zeroes p and sets its size: no particles, an isolated box. */
void fofkit_particles_init(fofkit_particles *p);

/* ---- friends-of-friends ---- */

/*
 * Two particles are friends when their binary32 minimum-image separation
 * squared is strictly below l*l (foflink(1), THE LINKING PREDICATE); in 6D
 * when also r2/l2 + w2/psi2 < 1, w the velocity difference. Groups are the
 * connected components. Level k (k >= 1) links at a shorter l (and psi
 * never larger), so that its groups lie inside level k-1's.
 */
typedef struct fofkit_fof_options {
    size_t size;                   /* sizeof(fofkit_fof_options), set by the _init */
    int nlevels;                   /* 1 .. FOFKIT_LEVELS_MAX (default 1)            */
    double b[FOFKIT_LEVELS_MAX];   /* l = b box / n^(1/3) per level (default b 0.2): every
                                      particle's spacing, foflink --spacing=all (foflink's
                                      default takes the lightest particles': zoom-in runs) */
    double l[FOFKIT_LEVELS_MAX];   /* absolute linking lengths: used instead of b
                                      when l[0] > 0; strictly decreasing          */
    double psi[FOFKIT_LEVELS_MAX]; /* 6D: velocity linking length per level (0: 3D) */
    int psi_relative;              /* psi is a multiple of the 3D rms velocity of the
                                      particles about their mean (foflink --psi-rel) */
    int device;                    /* FOFKIT_DEVICE_AUTO (default), _CPU or _GPU    */
    int nthreads;                  /* CPU threads (0: the OpenMP default)           */
    uint64_t minsize;              /* groups numbered: at least this many members
                                      (default 8, as groups(1))                    */
} fofkit_fof_options;

/* Sets o's size and the defaults above. */
void fofkit_fof_options_init(fofkit_fof_options *o);

typedef struct fofkit_fof_result {
    size_t size; /* sizeof(fofkit_fof_result), set by the _init */
    /* Where to write (the caller's host memory; NULL: not wanted), level k: */
    uint32_t *group[FOFKIT_LEVELS_MAX]; /* n: the particle's group, 1 .. ngroups by
                                           decreasing size (ties: lowest index first),
                                           0 for none: groups(1)'s numbers. Host
                                           memory, or device memory of the GPU the
                                           call links on (the ids then never leave
                                           it; a CPU run refuses it: FOFKIT_EINVAL) */
    uint32_t *sink[FOFKIT_LEVELS_MAX];  /* n: the lowest index in the particle's group
                                           (every group, of one member too)          */
    /* Written by the call, level k: */
    uint64_t *sizes[FOFKIT_LEVELS_MAX]; /* with group: ngroups + 1 entries, allocated by
                                           the call (fofkit_fof_result_free): sizes[g]
                                           members of group g; sizes[0] the particles in
                                           no numbered group                         */
    uint64_t ngroups[FOFKIT_LEVELS_MAX]; /* groups of at least minsize members       */
    uint64_t nfound[FOFKIT_LEVELS_MAX];  /* groups of any size, of one too           */
    double l[FOFKIT_LEVELS_MAX];         /* the linking lengths used                 */
    double psi[FOFKIT_LEVELS_MAX];       /* the velocity linking lengths (0: 3D)     */
    int nlevels;
    int device;                          /* FOFKIT_DEVICE_CPU or _GPU: where it ran  */
    double seconds;                      /* the whole call, wall time                */
    double seconds_link;                 /* of it, the tree build and the linking    */
} fofkit_fof_result;

/* Zeroes r and sets its size. */
void fofkit_fof_result_init(fofkit_fof_result *r);

/* Frees what a call allocated in r (the sizes); r can be used again. */
void fofkit_fof_result_free(fofkit_fof_result *r);

/* Links p's particles at every level of o; fills r. The partition is the
 * programs' (kdbuild | foflink | groups) particle for particle, on every
 * device: group[k] equals the .grp of `groups -m MINSIZE --level=k`.
 * Errors: FOFKIT_EINVAL (bad options, or b without a box), FOFKIT_EFORMAT
 * (a coordinate or velocity not finite, a position outside a periodic box),
 * FOFKIT_EDEVICE (device GPU without one, or too little GPU memory),
 * FOFKIT_ENOMEM, FOFKIT_EUNSUP (n >= 2^32, or a GPU array in a build without
 * CUDA cannot be; a GPU path beyond its limits). */
int fofkit_fof(const fofkit_particles *p, const fofkit_fof_options *o, fofkit_fof_result *r, fofkit_error *err);

/* ---- halo properties (halostats(1)) ---- */

enum { FOFKIT_CENTRE_MBP = 0, FOFKIT_CENTRE_COM = 1 };

typedef struct fofkit_halo_options {
    size_t size;         /* sizeof(fofkit_halo_options), set by the _init        */
    int centre;          /* FOFKIT_CENTRE_MBP (default: the most bound member) or
                            FOFKIT_CENTRE_COM (the centre of mass, no potentials) */
    double G;            /* in the particles' units (default 1)                 */
    double softening;    /* Plummer softening (0: 0.05 box / n^(1/3))            */
    double theta;        /* Barnes-Hut opening angle, (0, 1] (default 0.7)        */
    int64_t exact_max;   /* exact sums up to this many members (-1: default 2000) */
    int so;              /* spherical-overdensity radii and masses               */
    double omega_m;      /* with so: Omega_m (> 0, needed)                       */
    double omega_l;      /* with so: Omega_Lambda (< 0: 1 - Omega_m, the default) */
    double scale_factor; /* with so: the expansion factor (0: 1)                 */
    double rho_crit;     /* with so: the critical density today, comoving, in the
                            particles' units (0: the periodic box's mean density /
                            Omega_m)                                              */
    uint64_t so_min;     /* with so: particles in the profile's first sphere (0: 10) */
    int unbind;          /* the self-bound part of every group                   */
    uint64_t bound_min;  /* with unbind: fewer bound members: not bound (0: 10)   */
    int device;          /* where the potentials run: FOFKIT_DEVICE_*            */
    int nthreads;        /* CPU threads (0: the OpenMP default)                  */
    /* A comoving run, as halostats(1) measures a comoving stream (Gadget-4's
     * SUBFIND): positions comoving at scale_factor (> 0, needed), G the
     * physical one (potentials and vmax take G / scale_factor, the softening
     * comoving), the peculiar velocity vel * vel_scale (0: 1; Gadget's
     * snapshots sqrt(a)), and the Hubble flow hubble_flow * d (H(a) a, in
     * velocity per comoving length) about the centre added to sigma_v and to
     * the unbinding's energies. Lengths stay comoving in the table. */
    int comoving;
    double vel_scale, hubble_flow;
} fofkit_halo_options;

/* Sets o's size and the defaults above. */
void fofkit_halo_options_init(fofkit_halo_options *o);

/* The catalogue's columns for o, halostats(1)'s: how many, and column k's
 * name ("mass", "xc", "m200c", ...) and one-line definition (static
 * strings; NULL when k is out of range). */
int fofkit_halo_ncolumns(const fofkit_halo_options *o);
const char *fofkit_halo_column_name(const fofkit_halo_options *o, int k);
const char *fofkit_halo_column_description(const fofkit_halo_options *o, int k);
/* The index of the column named name, or -1. */
int fofkit_halo_column_index(const fofkit_halo_options *o, const char *name);

/* The properties of groups 1 .. ngroups of p (group: n entries, a group id
 * per particle, 0 for none, as fofkit_fof writes it): table (ngroups x
 * fofkit_halo_ncolumns(o) doubles, row g - 1 for group g) gets, column by
 * column, the values halostats(1) prints for those groups, in the
 * particles' units; minid and mbp_id name particles by p->ids (or index);
 * with FOFKIT_CENTRE_COM mbp_id is -1 and phi_mbp NaN (no potentials).
 * halostats sums in the particles' order: the same particles in another
 * order give the same values but for rounding.
 * group_up (NULL, or n entries: the groups of the level above) fills the
 * host column. bound (NULL, or n bytes; with unbind) gets 1 for the members
 * of a group's bound part. p needs velocities; positions in one periodic
 * box when periodic. Errors: FOFKIT_EINVAL (options, a group id above
 * ngroups, a group with no member), FOFKIT_EFORMAT (a value not finite, a
 * negative mass), FOFKIT_EDEVICE, FOFKIT_ENOMEM. */
int fofkit_halos(const fofkit_particles *p, const uint32_t *group, uint64_t ngroups, const uint32_t *group_up,
                 const fofkit_halo_options *o, double *table, unsigned char *bound, fofkit_error *err);

/* ---- under MPI ---- */

/*
 * fofkit_fof_mpi: each rank passes its own particles (any of the snapshot's,
 * in any order) with their ids (p->ids, unique over the ranks; NULL: rank
 * r's particle i is the particles of the ranks before r plus i); sink[k][i] (uint64, n entries) gets the lowest id
 * in particle i's level-k group over every rank: the same partition as one
 * process linking every rank's particles (foflink(1), DISTRIBUTED RUNS).
 * Collective over comm: every rank calls it and gets the same status and
 * message. comm may be any intracommunicator (MPI_COMM_WORLD, a split of
 * it): only its ranks take part, and runs over different communicators may
 * go on at once. MPI is called from the calling thread only (the threads of
 * MPI_THREAD_FUNNELED suffice). FOFKIT_EUNSUP in a build without MPI, or
 * when libfofkit.so cannot load libfofkit_mpi.so (the message names it).
 * minsize, group and sizes are not used (no numbering across ranks);
 * ngroups[k] gets the number of groups of any size, nfound too.
 */
#if defined(MPI_VERSION) || defined(FOFKIT_WITH_MPI)
#include <mpi.h>
int fofkit_fof_mpi(MPI_Comm comm, const fofkit_particles *p, const fofkit_fof_options *o, uint64_t *const *sink,
                   fofkit_fof_result *r, fofkit_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
