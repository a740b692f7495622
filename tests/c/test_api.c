/* test_api.c - the public calls of fofkit.h: groups and sinks against all pairs, bad arrays and options refused with clear messages, calls from several threads at once. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fofkit.h"
#include "link.h"
#include "needgpu.h"
#include "testdata.h"

/* The groups of brute-force all-pairs linking (link_brute.c), as sinks. */
static void brute_sinks(const float *pos, uint64_t n, double l, double box, uint32_t *sink)
{
    fk_linkopts o = {l, 0, box > 0, box, 0};
    fk_error err = {0};
    fk_link_brute_cpu(n, pos, NULL, &o, sink, NULL, &err);
}

/* p: n particles of td_clustered in [-0.5, 0.5) shifted into [0, 1). */
static float *clustered(uint64_t n)
{
    float *pos = malloc(12 * n);
    td_clustered(pos, n, 200);
    for (uint64_t i = 0; i < 3 * n; i++) {
        pos[i] += 0.5f;
        if (pos[i] >= 1.0f) pos[i] -= 1.0f;
        if (pos[i] < 0.0f) pos[i] = 0.0f;
    }
    return pos;
}

static void set_particles(fofkit_particles *p, const float *pos, uint64_t n)
{
    fofkit_particles_init(p);
    p->n = n, p->pos = pos, p->periodic = 1, p->box = 1.0;
}

static void test_against_brute(void)
{
    const uint64_t n = 6000;
    float *pos = clustered(n);
    uint32_t *ref = malloc(4 * n), *sink = malloc(4 * n), *group = malloc(4 * n);
    const double l = 0.01;
    brute_sinks(pos, n, l, 1.0, ref);
    fofkit_particles p;
    set_particles(&p, pos, n);
    fofkit_fof_options o;
    fofkit_fof_options_init(&o);
    o.l[0] = l, o.minsize = 1, o.device = FOFKIT_DEVICE_CPU;
    fofkit_fof_result r;
    fofkit_fof_result_init(&r);
    r.sink[0] = sink, r.group[0] = group;
    fofkit_error e;
    CHECK_MSG(fofkit_fof(&p, &o, &r, &e) == FOFKIT_OK, "%s", e.message);
    CHECK(e.code == 0 && e.message[0] == '\0');
    /* brute force's canonical sinks are the lowest index of each group: the same array */
    CHECK(memcmp(ref, sink, 4 * n) == 0);
    /* numbering: by decreasing size, ties by the lowest index; sizes add up */
    uint64_t total = 0, ng = r.ngroups[0];
    CHECK(ng == r.nfound[0] && ng > 1);
    for (uint64_t g = 0; g <= ng; g++) total += r.sizes[0][g];
    CHECK(total == n && r.sizes[0][0] == 0);
    int order_ok = 1, same_ok = 1;
    uint32_t *first = calloc(ng + 1, 4);
    for (uint64_t i = 0; i < n; i++) {
        if (!first[group[i]]) first[group[i]] = (uint32_t)i + 1;
        same_ok &= group[sink[i]] == group[i];
    }
    for (uint64_t g = 2; g <= ng; g++)
        order_ok &= r.sizes[0][g] < r.sizes[0][g - 1] ||
                    (r.sizes[0][g] == r.sizes[0][g - 1] && first[g] > first[g - 1]);
    CHECK(order_ok && same_ok);
    CHECK(fabs(r.l[0] - (double)(float)l) == 0 && r.device == FOFKIT_DEVICE_CPU && r.nlevels == 1);
    fofkit_fof_result_free(&r);
    CHECK(r.sizes[0] == NULL);
    /* minsize: groups below it get 0, the rest keep their numbers */
    uint32_t *g8 = malloc(4 * n);
    o.minsize = 8;
    r.sink[0] = NULL, r.group[0] = g8;
    CHECK(fofkit_fof(&p, &o, &r, &e) == FOFKIT_OK);
    int kept_ok = 1;
    for (uint64_t i = 0; i < n; i++) kept_ok &= g8[i] == (group[i] <= r.ngroups[0] ? group[i] : 0u);
    CHECK(kept_ok && r.ngroups[0] < ng && r.sizes[0][r.ngroups[0]] >= 8);
    fofkit_fof_result_free(&r);
    free(pos), free(ref), free(sink), free(group), free(first), free(g8);
}

/* One call's expected failure: its code and a piece of its message. */
static void expect(const fofkit_particles *p, const fofkit_fof_options *o, int code, const char *piece)
{
    fofkit_fof_result r;
    fofkit_fof_result_init(&r);
    uint32_t g[64];
    r.group[0] = p && p->n <= 64 ? g : NULL;
    fofkit_error e;
    int st = fofkit_fof(p, o, &r, &e);
    CHECK_MSG(st == code && e.code == code && strstr(e.message, piece) && !strchr(e.message, '\n'),
              "status %d, message '%s', expected %d and '%s'", st, e.message, code, piece);
    CHECK(strncmp(e.message, "fofkit_fof: ", 12) == 0);
    CHECK(r.sizes[0] == NULL);
}

static void test_bad_input(void)
{
    float pos[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.15f, 0.25f, 0.35f};
    fofkit_particles p;
    fofkit_fof_options o;
    set_particles(&p, pos, 4);
    fofkit_fof_options_init(&o);
    o.device = FOFKIT_DEVICE_CPU;
    expect(NULL, &o, FOFKIT_EINVAL, "no fofkit_particles");
    expect(&p, NULL, FOFKIT_EINVAL, "no fofkit_fof_options");
    fofkit_particles raw = p;
    raw.size = 3;
    expect(&raw, &o, FOFKIT_EINVAL, "not set by its _init call");
    pos[4] = NAN;
    expect(&p, &o, FOFKIT_EFORMAT, "pos: particle 1 has a non-finite coordinate");
    pos[4] = 0.5f, pos[9] = 1.0f;
    expect(&p, &o, FOFKIT_EFORMAT, "pos: particle 3 at (1 0.25 0.35) lies outside the periodic box [0, 1)");
    p.box = 0.5; /* a box too small for the positions */
    pos[9] = 0.15f;
    expect(&p, &o, FOFKIT_EFORMAT, "lies outside the periodic box [0, 0.5)");
    p.box = 1;
    o.l[0] = 0.6; /* a box too small for l */
    expect(&p, &o, FOFKIT_EINVAL, "larger than half the box");
    o.l[0] = 0;
    o.b[0] = -1;
    expect(&p, &o, FOFKIT_EINVAL, "b = -1 is not a positive number");
    o.b[0] = 0.2, o.nlevels = 2, o.b[1] = 0.3;
    expect(&p, &o, FOFKIT_EINVAL, "not shorter than level 0's");
    o.nlevels = 9;
    expect(&p, &o, FOFKIT_EINVAL, "nlevels 9");
    o.nlevels = 1, o.psi[0] = 1;
    expect(&p, &o, FOFKIT_EINVAL, "velocities needed (vel is NULL)");
    float vel[12] = {0};
    vel[7] = INFINITY;
    p.vel = vel;
    expect(&p, &o, FOFKIT_EFORMAT, "vel: particle 2 has a non-finite velocity");
    vel[7] = 0, o.psi_relative = 1; /* velocities all 0: no rms to scale psi by */
    expect(&p, &o, FOFKIT_EINVAL, "psi_relative: the velocities do not vary");
    p.vel = NULL, o.psi[0] = 0, o.psi_relative = 0;
    o.device = 7;
    expect(&p, &o, FOFKIT_EINVAL, "device 7");
    o.device = FOFKIT_DEVICE_CPU, o.minsize = 0;
    expect(&p, &o, FOFKIT_EINVAL, "minsize 0");
    o.minsize = 8;
    p.periodic = 0, p.box = 0; /* isolated without a box: b has no mean spacing */
    expect(&p, &o, FOFKIT_EINVAL, "b needs the box");
    p.periodic = 1, p.box = -1;
    expect(&p, &o, FOFKIT_EINVAL, "a periodic box needs a finite side");
    p.box = 1, p.pos = NULL;
    expect(&p, &o, FOFKIT_EINVAL, "no positions");
    p.pos = pos;
    /* a GPU asked for in a build or on a machine without one */
    fofkit_fof_result r;
    fofkit_fof_result_init(&r);
    fofkit_error e;
    o.device = FOFKIT_DEVICE_GPU;
    int st = fofkit_fof(&p, &o, &r, &e);
    CHECK(st == FOFKIT_OK || (st == FOFKIT_EDEVICE && strstr(e.message, "fofkit_fof: ")));
    fofkit_fof_result_free(&r);
    /* a result not initialised */
    fofkit_fof_result bad;
    memset(&bad, 0, sizeof bad);
    o.device = FOFKIT_DEVICE_CPU;
    CHECK(fofkit_fof(&p, &o, &bad, &e) == FOFKIT_EINVAL && strstr(e.message, "fofkit_fof_result"));
    /* no particles: no groups, no failure */
    p.n = 0;
    fofkit_fof_result_init(&r);
    CHECK(fofkit_fof(&p, &o, &r, &e) == FOFKIT_OK && r.ngroups[0] == 0 && r.nfound[0] == 0);
    fofkit_fof_result_free(&r);
    CHECK(strcmp(fofkit_strerror(FOFKIT_EINVAL), "invalid argument") == 0);
    CHECK(strcmp(fofkit_version(), FOFKIT_VERSION_STRING) == 0);
}

static void test_halos_bad(void)
{
    float pos[9] = {0.1f, 0.1f, 0.1f, 0.11f, 0.1f, 0.1f, 0.5f, 0.5f, 0.5f}, vel[9] = {0}, mass[3] = {1, 1, -1};
    uint32_t group[3] = {1, 1, 0};
    fofkit_particles p;
    set_particles(&p, pos, 3);
    fofkit_halo_options h;
    fofkit_halo_options_init(&h);
    h.device = FOFKIT_DEVICE_CPU;
    double table[64];
    fofkit_error e;
    CHECK(fofkit_halos(&p, group, 1, NULL, &h, table, NULL, &e) == FOFKIT_EINVAL && strstr(e.message, "velocities"));
    p.vel = vel;
    CHECK_MSG(fofkit_halos(&p, group, 1, NULL, &h, table, NULL, &e) == FOFKIT_OK, "%s", e.message);
    int nc = fofkit_halo_ncolumns(&h), kn = fofkit_halo_column_index(&h, "n"), km = fofkit_halo_column_index(&h, "mass");
    CHECK(nc > 10 && kn >= 0 && km >= 0 && table[kn] == 2 && table[km] == 2);
    CHECK(fofkit_halo_column_index(&h, "m200c") == -1 && fofkit_halo_column_name(&h, nc) == NULL);
    h.so = 1;
    CHECK(fofkit_halo_column_index(&h, "m200c") > 0 && fofkit_halo_ncolumns(&h) == nc + 8);
    CHECK(fofkit_halos(&p, group, 1, NULL, &h, table, NULL, &e) == FOFKIT_EINVAL && strstr(e.message, "omega_m"));
    h.so = 0;
    p.mass = mass;
    CHECK(fofkit_halos(&p, group, 1, NULL, &h, table, NULL, &e) == FOFKIT_EFORMAT && strstr(e.message, "mass: particle 2"));
    p.mass = NULL;
    group[2] = 5;
    CHECK(fofkit_halos(&p, group, 1, NULL, &h, table, NULL, &e) == FOFKIT_EFORMAT && strstr(e.message, "particle 2"));
    group[2] = 0;
    CHECK(fofkit_halos(&p, group, 2, NULL, &h, table, NULL, &e) == FOFKIT_EFORMAT && strstr(e.message, "no member"));
}

/* Several calls at once from threads of their own: each gets the answer it gets alone. */
typedef struct job {
    const float *pos;
    uint64_t n;
    double l;
    uint32_t *group;
    int status;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    fofkit_particles p;
    set_particles(&p, j->pos, j->n);
    fofkit_fof_options o;
    fofkit_fof_options_init(&o);
    o.l[0] = j->l, o.minsize = 1, o.device = FOFKIT_DEVICE_CPU, o.nthreads = 2;
    fofkit_fof_result r;
    fofkit_fof_result_init(&r);
    r.group[0] = j->group;
    j->status = fofkit_fof(&p, &o, &r, NULL);
    fofkit_fof_result_free(&r);
    return NULL;
}

static void test_threads(void)
{
    enum { JOBS = 4 };
    const uint64_t n = 20000;
    float *pos = clustered(n);
    job jobs[JOBS], alone[JOBS];
    pthread_t th[JOBS];
    for (int k = 0; k < JOBS; k++) {
        jobs[k] = (job){pos, n, 0.004 + 0.002 * k, malloc(4 * n), -1};
        alone[k] = jobs[k];
        alone[k].group = malloc(4 * n);
        run_job(&alone[k]);
    }
    for (int k = 0; k < JOBS; k++) pthread_create(&th[k], NULL, run_job, &jobs[k]);
    for (int k = 0; k < JOBS; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < JOBS; k++) {
        CHECK(jobs[k].status == FOFKIT_OK && alone[k].status == FOFKIT_OK);
        CHECK(memcmp(jobs[k].group, alone[k].group, 4 * n) == 0);
        free(jobs[k].group), free(alone[k].group);
    }
    free(pos);
}

/* With a GPU: host arrays linked there, 3 levels of 6D, the CPU's groups and sinks. */
static void test_gpu(void)
{
    int status;
    if (!need_gpu("test_api (GPU)", &status)) {
        CHECK(status == 0);
        return;
    }
    const uint64_t n = 200000;
    float *pos = clustered(n), *vel = malloc(12 * n);
    td_streams(vel, n, 1.0);
    uint32_t *out[2][2][3];
    for (int d = 0; d < 2; d++) {
        fofkit_particles p;
        set_particles(&p, pos, n);
        p.vel = vel;
        fofkit_fof_options o;
        fofkit_fof_options_init(&o);
        o.nlevels = 3, o.b[0] = 0.2, o.b[1] = 0.1, o.b[2] = 0.05, o.psi[0] = 1, o.psi_relative = 1;
        o.device = d ? FOFKIT_DEVICE_GPU : FOFKIT_DEVICE_CPU;
        fofkit_fof_result r;
        fofkit_fof_result_init(&r);
        for (int k = 0; k < 3; k++) r.group[k] = out[d][0][k] = malloc(4 * n), r.sink[k] = out[d][1][k] = malloc(4 * n);
        fofkit_error e;
        CHECK_MSG(fofkit_fof(&p, &o, &r, &e) == FOFKIT_OK, "%s", e.message);
        CHECK(r.device == o.device);
        fofkit_fof_result_free(&r);
    }
    for (int k = 0; k < 3; k++)
        for (int w = 0; w < 2; w++) {
            CHECK_MSG(memcmp(out[0][w][k], out[1][w][k], 4 * n) == 0, "level %d: %s differ", k, w ? "sinks" : "groups");
            free(out[0][w][k]), free(out[1][w][k]);
        }
    free(pos), free(vel);
}

/* With a GPU: the groups numbered there, whatever the caller asks for (groups
 * alone, sinks alone, the counts alone), equal the CPU's: ids, sizes, counts. */
static void test_gpu_numbering(void)
{
    int status;
    if (!need_gpu("test_api (GPU numbering)", &status)) {
        CHECK(status == 0);
        return;
    }
    const uint64_t n = 300000;
    float *pos = clustered(n);
    static const uint64_t minsizes[] = {1, 20};
    for (int m = 0; m < 2; m++) {
        fofkit_particles p;
        set_particles(&p, pos, n);
        fofkit_fof_options o;
        fofkit_fof_options_init(&o);
        o.nlevels = 3, o.b[0] = 0.2, o.b[1] = 0.1, o.b[2] = 0.05, o.minsize = minsizes[m];
        fofkit_fof_result cpu, gpu;
        fofkit_fof_result_init(&cpu);
        uint32_t *cg[3], *cs[3], *gg[3], *gs[3];
        for (int k = 0; k < 3; k++) {
            cpu.group[k] = cg[k] = malloc(4 * n), cpu.sink[k] = cs[k] = malloc(4 * n);
            gg[k] = malloc(4 * n), gs[k] = malloc(4 * n);
        }
        fofkit_error e;
        o.device = FOFKIT_DEVICE_CPU;
        CHECK_MSG(fofkit_fof(&p, &o, &cpu, &e) == FOFKIT_OK, "%s", e.message);
        o.device = FOFKIT_DEVICE_GPU;
        /* asks: level 0 groups alone, level 1 sinks alone, level 2 the counts alone; then the reverse */
        for (int ask = 0; ask < 2; ask++) {
            fofkit_fof_result_init(&gpu);
            const int want_group = ask ? 2 : 0, want_sink = 1;
            gpu.group[want_group] = gg[want_group];
            gpu.sink[want_sink] = gs[want_sink];
            memset(gg[want_group], 0xa5, 4 * n), memset(gs[want_sink], 0xa5, 4 * n);
            CHECK_MSG(fofkit_fof(&p, &o, &gpu, &e) == FOFKIT_OK, "%s", e.message);
            CHECK(gpu.device == FOFKIT_DEVICE_GPU);
            for (int k = 0; k < 3; k++) {
                CHECK_MSG(gpu.ngroups[k] == cpu.ngroups[k] && gpu.nfound[k] == cpu.nfound[k],
                          "minsize %d, level %d: GPU %llu groups of %llu, CPU %llu of %llu", (int)o.minsize, k,
                          (unsigned long long)gpu.ngroups[k], (unsigned long long)gpu.nfound[k],
                          (unsigned long long)cpu.ngroups[k], (unsigned long long)cpu.nfound[k]);
                CHECK((gpu.sizes[k] != NULL) == (k == want_group));
            }
            CHECK_MSG(memcmp(gg[want_group], cg[want_group], 4 * n) == 0, "minsize %d, level %d: groups differ",
                      (int)o.minsize, want_group);
            CHECK(gpu.sizes[want_group] && memcmp(gpu.sizes[want_group], cpu.sizes[want_group],
                                                  (cpu.ngroups[want_group] + 1) * sizeof(uint64_t)) == 0);
            CHECK_MSG(memcmp(gs[want_sink], cs[want_sink], 4 * n) == 0, "minsize %d, level %d: sinks differ",
                      (int)o.minsize, want_sink);
            fofkit_fof_result_free(&gpu);
        }
        fofkit_fof_result_free(&cpu);
        for (int k = 0; k < 3; k++) free(cg[k]), free(cs[k]), free(gg[k]), free(gs[k]);
    }
    free(pos);
}

int main(void)
{
    test_gpu();
    test_gpu_numbering();
    test_against_brute();
    test_bad_input();
    test_halos_bad();
    test_threads();
    CHECK_DONE();
}
