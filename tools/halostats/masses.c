/* masses.c - halostats --so and --unbind: options, the cosmology, the SO and unbinding passes of each level, their outputs. */
#include "masses.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "filter.h"
#include "prog.h"
#include "snapunits.h"
#include "spacing.h"
#include "unbind_gpu.h"

void hs_masses_help(void)
{
    printf("      --so              spherical-overdensity radii and masses about the centre, over every\n"
           "                        particle: r200c m200c r500c m500c r200m m200m rvir mvir (nan: not reached)\n"
           "      --omega-m=X       Omega_m (needed by --so unless the stream's SNAP has omega_m)\n"
           "      --omega-l=X       Omega_Lambda (default: SNAP's omega_l, else 1 - Omega_m)\n"
           "      --scale-factor=A  the expansion factor of the snapshot (default: SNAP's time)\n"
           "      --redshift=Z      the same as --scale-factor=1/(1+Z)\n"
           "      --rho-crit=X      critical density today, comoving, in the output units (default:\n"
           "                        3 H0^2 / (8 pi G) from the stream's units and h when SNAP has them,\n"
           "                        else the periodic box's mean density / Omega_m)\n"
           "      --hubble=H0       or H0 in output velocity per output length: rho_crit = 3 H0^2 / (8 pi G)\n"
           "      --so-min=N        the profile starts at the sphere holding N particles (default %d)\n"
           "      --so-from=STREAM  the SO sums count the particles of STREAM (e.g. every type of the\n"
           "                        snapshot: hdf52bin SNAP -o STREAM) instead of this stream's\n"
           "      --unbind          the self-bound part of every group at every level: n_bound, mass_bound\n"
           "      --bound-min=N     fewer bound members than N: not bound (default %d)\n"
           "      --level=K         with --format=grp, the bound members of level K (default 0)\n",
           FK_SO_MINPART, FK_UNBIND_MINBOUND);
}

int hs_masses_option(int opt, const char *arg, hs_masses *m)
{
    switch (opt) {
    case HS_O_SO: m->so = 1; break;
    case HS_O_OM: m->omega_m = prog_parse_positive("--omega-m", arg, DBL_MAX), m->have_om = 1; break;
    case HS_O_OL: m->omega_l = prog_parse_double("--omega-l", arg, 0, 100), m->have_ol = 1; break;
    case HS_O_A: m->a = prog_parse_positive("--scale-factor", arg, DBL_MAX), m->have_a = 1; break;
    case HS_O_Z: m->z = prog_parse_double("--redshift", arg, 0, 1e6), m->have_z = 1; break;
    case HS_O_RHO: m->rho_crit = prog_parse_positive("--rho-crit", arg, DBL_MAX), m->have_rho = 1; break;
    case HS_O_H: m->hubble = prog_parse_positive("--hubble", arg, DBL_MAX), m->have_h = 1; break;
    case HS_O_UNBIND: m->unbind = 1; break;
    case HS_O_BMIN: m->minbound = (uint64_t)prog_parse_int("--bound-min", arg, 1, INT64_MAX); break;
    case HS_O_SOMIN: m->so_min = (uint64_t)prog_parse_int("--so-min", arg, 1, INT64_MAX), m->have_somin = 1; break;
    case HS_O_LEVEL: m->grp_level = (int)prog_parse_int("--level", arg, 0, HS_MAX_LEVELS - 1); break;
    case HS_O_SOFROM: m->so_from = arg; break;
    default: return 0;
    }
    return 1;
}

void hs_masses_check(const hs_masses *m)
{
    if (!m->so && (m->have_om || m->have_ol || m->have_a || m->have_z || m->have_rho || m->have_h || m->have_somin ||
                   m->so_from))
        prog_usage("options --omega-m, --omega-l, --scale-factor, --redshift, --rho-crit, --hubble, --so-min and "
                   "--so-from apply to --so only");
    if (m->have_a && m->have_z) prog_usage("options --scale-factor and --redshift exclude each other");
    if (m->have_rho && m->have_h) prog_usage("options --rho-crit and --hubble exclude each other");
    if (m->grp && !m->unbind) prog_usage("option --format=grp needs --unbind (it writes the bound members)");
    if (m->grp_level && !m->grp) prog_usage("option --level applies to --format=grp only");
}

unsigned hs_masses_flags(const hs_masses *m)
{
    return (m->so ? FK_HCOL_SO : 0u) | (m->unbind ? FK_HCOL_UNBIND : 0u);
}

/* A number from the SNAP text under one of two keys, when there. */
static int snap_value(const char *text, const char *k1, const char *k2, double *v)
{
    fk_error err = {0};
    const char *k = text && fk_kv_has(text, k1) ? k1 : text && k2 && fk_kv_has(text, k2) ? k2 : NULL;
    if (!k) return 0;
    if (fk_kv_get_dbl(text, k, v, "SNAP chunk", &err)) prog_fail(&err);
    return 1;
}

/* --so-from: the particles of another stream of the same snapshot (its POS
 * and MASS, and its IDs when it has them: the order of the SO sums), checked
 * against the stream's box. */
static void read_so_stream(hs_masses *m, const fk_snap *s)
{
    fk_error err = {0};
    const char *name = strcmp(m->so_from, "-") ? m->so_from : "stdin";
    FILE *f = prog_open_input(m->so_from, 1, 0);
    fk_filter flt;
    enum { W_POS, W_MASS, W_ID, NW };
    fk_want want[NW] = {
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3, "--so-from needs a particle stream"},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 1, "--so-from needs a particle stream"},
        [W_ID] = {"ID", FK_W_PARTICLE | FK_W_ID, NULL, 1, NULL},
    };
    if (fk_filter_start(&flt, f, name, NULL, 0, &err) || fk_filter_read(&flt, want, NW, &err) ||
        fk_snap_check_positions(&flt.snap, want[W_POS].data[0], name, &err))
        prog_fail(&err);
    const fk_snap *o = &flt.snap;
    if (o->box != s->box || o->origin != s->origin || o->periodic != s->periodic || o->nsource != s->nsource)
        prog_die(EXIT_DATA, "--so-from=%s: its box (%g from %g, periodic %d, %" PRIu64 " particles in the source) is not "
                 "the stream's (%g from %g, periodic %d, %" PRIu64 "): not the same snapshot", name, o->box, o->origin,
                 o->periodic, o->nsource, s->box, s->origin, s->periodic, s->nsource);
    m->so_snap = *o;
    m->so_pos = want[W_POS].data[0], m->so_mass = want[W_MASS].data[0];
    if (want[W_ID].data[0]) { /* widened to 8 bytes */
        const uint64_t n = o->n;
        if (!(m->so_ids = malloc((n ? n : 1) * sizeof *m->so_ids)))
            prog_die(EXIT_RESOURCE, "out of memory for the IDs of %" PRIu64 " particles", n);
        const int wide = !strcmp(want[W_ID].chunk[0].dtype, "<u8");
        for (uint64_t i = 0; i < n; i++)
            m->so_ids[i] = wide ? ((const uint64_t *)want[W_ID].data[0])[i] : ((const uint32_t *)want[W_ID].data[0])[i];
        free(want[W_ID].data[0]);
    }
    fk_filter_free(&flt);
    fk_input_close(f);
}

void hs_masses_setup(hs_masses *m, const fk_snap *s, const char *snaptext, const float *pos, const float *mass,
                     const uint64_t *ids, const fk_halo_units *u, double G_out)
{
    if (!m->so) return;
    double v;
    m->so_snap = *s;
    if (m->so_from) {
        read_so_stream(m, s);
        pos = m->so_pos, mass = m->so_mass, ids = m->so_ids; /* its own IDs, or its order */
    }
    const fk_snap *c = &m->so_snap; /* the particles counted */
    m->om_from = m->ol_from = m->a_from = m->rho_from = "given";
    if (!m->have_om) {
        if (!snap_value(snaptext, "omega_m", "omega0", &v))
            prog_usage("option --so needs --omega-m (the stream's SNAP gives no omega_m)");
        m->omega_m = v, m->om_from = "from SNAP";
    }
    if (!m->have_ol) {
        if (snap_value(snaptext, "omega_l", "omega_lambda", &v))
            m->omega_l = v, m->ol_from = "from SNAP";
        else
            m->omega_l = 1 - m->omega_m, m->ol_from = "1 - Omega_m: flat";
    }
    if (m->have_z) {
        m->a = 1 / (1 + m->z);
    } else if (!m->have_a) {
        if (snap_value(snaptext, "redshift", NULL, &v) && v > -1) {
            m->a = 1 / (1 + v), m->a_from = "SNAP's redshift";
        } else {
            if (!(s->time > 0))
                prog_usage("option --so needs --scale-factor or --redshift (SNAP's time is %g, not an expansion factor)",
                           s->time);
            m->a = s->time, m->a_from = "SNAP's time";
        }
    }
    /* rho_c0 in the stream's units: output density rho_out is rho_out L^3 / M of the stream's */
    double rho_c0;
    if (m->have_rho) {
        rho_c0 = m->rho_crit * pow(u->length, 3) / u->mass;
    } else if (m->have_h) {
        m->rho_crit = 3 * m->hubble * m->hubble / (8 * M_PI * G_out);
        rho_c0 = m->rho_crit * pow(u->length, 3) / u->mass;
        m->rho_from = "3 H0^2 / (8 pi G)";
    } else if (s->have_units && s->hubble > 0) {
        /* H0 = 100 h km/s/Mpc in the stream's units (no h when they are per h), G from them */
        double h0 = 1e7 / (1000 * FK_KPC_CM) * (s->units_per_h ? 1 : s->hubble) * s->unit_length_cm /
                    s->unit_velocity_cm_s;
        rho_c0 = 3 * h0 * h0 / (8 * M_PI * fk_snap_G(s));
        m->rho_crit = rho_c0 * u->mass / pow(u->length, 3);
        m->rho_from = s->units_per_h ? "3 H0^2 / (8 pi G), H0 100 h km/s/Mpc, from the stream's units"
                                     : "3 H0^2 / (8 pi G), H0 100 h km/s/Mpc, from the stream's units and h";
    } else {
        if (!c->periodic) prog_usage("option --so needs --rho-crit or --hubble for a box that is not periodic");
        if (c->n != c->nsource)
            prog_usage("option --so needs --rho-crit or --hubble: the %s holds %" PRIu64 " of the %" PRIu64
                       " particles, so its mean density is not the box's", m->so_from ? "--so-from stream" : "stream",
                       c->n, c->nsource);
        /* the exact sum, independent of order (spacing.h), as the ranks of mpirun add it */
        double total = 0;
        if (m->have_mass_total && !m->so_from) {
            total = m->mass_total;
        } else {
            fk_spacing_sums sums;
            fk_error err = {0};
            if (fk_spacing_sum(mass, NULL, c->n, &sums, m->so_from ? m->so_from : "stream", &err)) prog_fail(&err);
            total = fk_spacing_mass(&sums, 1); /* type NULL: every mass counted as dark (1) */
        }
        if (!(total > 0))
            prog_die(EXIT_DATA, "the %s particles have no mass, so no mean density: give --rho-crit or --hubble",
                     m->so_from ? "--so-from stream's" : "stream's");
        rho_c0 = total / (c->box * c->box * c->box) / m->omega_m;
        m->rho_crit = rho_c0 * u->mass / pow(u->length, 3);
        m->rho_from = "the box's mean density / Omega_m";
    }
    m->cosmo = (fk_cosmo){m->omega_m, m->omega_l, m->a, rho_c0};
    fk_error err = {0};
    if (fk_so_thresholds(&m->cosmo, m->rho, &m->delta_vir, &err)) prog_die(EXIT_USAGE, "%s", err.msg);
    m->parts = (fk_so_particles){c->n, pos, mass, s->periodic, s->box, s->origin, ids};
}

double *hs_masses_phi(hs_masses *m, uint64_t n, int mbp)
{
    if (!m->unbind || !mbp) return NULL;
    if (!m->phi && !(m->phi = malloc((n ? n : 1) * sizeof *m->phi)))
        prog_die(EXIT_RESOURCE, "out of memory for the potentials of %" PRIu64 " particles", n);
    return m->phi;
}

/* Level k's SO masses (the grid first, at the first level). */
static int level_so(hs_masses *m, uint64_t ng, fk_halo *h, fk_error *err)
{
    double t = prog_now();
    if (!m->grid) {
        int st = fk_so_grid_build(&m->parts, &m->grid, err);
        if (st) return st;
        m->t_grid = prog_now() - t;
    }
    int st = fk_halostats_so(m->grid, ng, h, m->rho, m->so_min ? m->so_min : FK_SO_MINPART, err);
    m->t_level_so = prog_now() - t;
    return st;
}

/* fk_unbind_halos_run into m->bound, with its time. */
static int level_unbind(hs_masses *m, const fk_halo_input *hin, uint64_t ng, fk_halo *h, const fk_unbind_params *up,
                        const fk_unbind_run *run, fk_error *err)
{
    double t = prog_now();
    int st = fk_unbind_halos_run(hin, ng, h, up, run, m->bound, err);
    m->t_level_unbind = prog_now() - t;
    return st;
}

void hs_masses_level(hs_masses *m, const fk_halo_input *hin, int k, fk_halo *h, uint64_t ng, const fk_pot_params *pot,
                     uint64_t nsource, int gpu)
{
    fk_error err = {0}, uerr = {0};
    fk_unbind_params up = {*pot, m->minbound ? m->minbound : FK_UNBIND_MINBOUND, NULL, NULL};
    fk_unbind_stats us;
    fk_unbind_run run = {m->phi, NULL, 0, &us, NULL, 0, 0};
    if (m->unbind && gpu) fk_unbind_use_gpu(&up, &run, omp_get_max_threads());
    if (m->unbind && !m->bound && !(m->bound = malloc(hin->n ? hin->n : 1)))
        prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", hin->n);
    double t = prog_now();
    int grid = !m->grid, so_rc = 0, unbind_rc = 0, side = m->so && run.device;
    const int nt = omp_get_max_threads();
    const int so_threads = nt > run.feeders ? nt - run.feeders : 1;
    m->t_level_so = m->t_level_unbind = 0;
    if (side) {
        /* Side by side, each in a team of its own (nested): the unbinding's
         * critical path is the GPU's groups, and once its other threads have
         * done the small groups the cores would idle; the SO searches take
         * as many threads as do not feed the GPU */
        const int levels = omp_get_max_active_levels();
        omp_set_max_active_levels(2);
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            {
                omp_set_num_threads(nt);
                unbind_rc = level_unbind(m, hin, ng, h, &up, &run, &uerr);
            }
#pragma omp section
            {
                omp_set_num_threads(so_threads);
                so_rc = level_so(m, ng, h, &err);
            }
        }
        omp_set_max_active_levels(levels);
        omp_set_num_threads(nt);
    } else {
        if (m->so) so_rc = level_so(m, ng, h, &err);
        if (!so_rc && m->unbind) unbind_rc = level_unbind(m, hin, ng, h, &up, &run, &uerr);
    }
    if (so_rc) prog_fail(&err);
    if (unbind_rc) prog_fail(&uerr);
    const double both = prog_now() - t;
    m->t_so += m->t_level_so, m->t_unbind += m->t_level_unbind;
    if (m->so && grid) prog_info("SO: a grid over the %" PRIu64 " particles in %.3f s", m->parts.n, m->t_grid);
    if (m->so) prog_info("level %d: SO masses in %.3f s", k, m->t_level_so - (grid ? m->t_grid : 0));
    if (!m->unbind) return;
    uint32_t *b = calloc(nsource ? nsource : 1, sizeof *b);
    if (!b) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", nsource);
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < hin->n; i++)
        if (m->bound[i]) b[hin->ids ? hin->ids[i] : i] = hin->grp[i];
    m->bgid[k] = b;
    uint64_t nb = 0, nbound = 0;
    for (uint64_t g = 0; g < ng; g++) nb += h[g].n_bound > 0, nbound += h[g].n_bound;
    prog_info("level %d: %" PRIu64 " of %" PRIu64 " groups bound, %" PRIu64 " bound members; unbinding %.3f s", k, nb,
              ng, nbound, m->t_level_unbind);
    if (side)
        prog_info("level %d: SO masses (%d threads) and unbinding (%d threads, %d feeding the GPU) side by side: both "
                  "done in %.3f s",
                  k, so_threads, nt, run.feeders, both);
    prog_info("level %d: unbinding's %" PRIu64 " groups of more than %" PRIu64 " members (%" PRIu64 " passes, %" PRIu64
              " full sums) done at %.3f s, the largest in %.3f s (%u passes, %u full sums: sums %.3f s, updates %.3f s, "
              "the rest %.3f s); their thread seconds: sums %.3f, updates %.3f, the rest %.3f; the other %" PRIu64
              " groups (%" PRIu64 " passes, %" PRIu64 " full sums) done at %.3f s, their thread seconds: sums %.3f, "
              "updates %.3f, the rest %.3f",
              k, us.nbig, us.big_above, us.passes, us.sums, us.wall_big, us.t_largest, us.largest.passes,
              us.largest.sums, us.largest.t_sums, us.largest.t_updates, us.largest.t_rest, us.t_sums, us.t_updates,
              us.t_rest, us.nsmall, us.small_passes, us.small_sums, us.wall_small, us.small_t_sums, us.small_t_updates,
              us.small_t_rest);
}

/* Which particles the SO sums count, for the header: "the stream's 32768
 * particles (gas 0 of 32768, dark 32768 of 32768, star 0 of 0 in the
 * snapshot)". */
static void so_counted(FILE *f, const hs_masses *m)
{
    const fk_snap *c = &m->so_snap;
    fprintf(f, "# SO sums: %s %" PRIu64 " particles (gas %" PRIu64 " of %" PRIu64 ", dark %" PRIu64 " of %" PRIu64
               ", star %" PRIu64 " of %" PRIu64 " in the snapshot)%s\n",
            m->so_from ? "the --so-from stream's" : "the stream's", c->n, c->ntype[0], c->nsource_type[0], c->ntype[1],
            c->nsource_type[1], c->ntype[2], c->nsource_type[2],
            c->n < c->nsource ? ";\n#   the snapshot's other particles are not counted (--so-from=STREAM counts "
                                "those of a stream that has them)"
                              : ": every particle of the snapshot");
}

void hs_masses_header(FILE *f, const hs_masses *m, const fk_halo_units *u)
{
    if (m->so) {
        char un[64];
        so_counted(f, m);
        fprintf(f, "# SO: about the centre, every particle counted; comoving radii at a = %.10g (%s);\n"
                   "#   Omega_m %.10g (%s), Omega_L %.10g (%s), rho_crit,0 %.10g %s %s comoving (%s);\n"
                   "#   thresholds (comoving, %s %s): 200c %.10g, 500c %.10g, 200m %.10g, vir %.10g (Delta_vir\n"
                   "#   %.6g rho_crit(a), Bryan & Norman 1998); radius: from the sphere of %" PRIu64 " particles out, the\n"
                   "#   first particle whose sphere's mean density is below the threshold, interpolated in log rho\n"
                   "#   against log r; nan: not reached\n",
                m->a, m->a_from, m->omega_m, m->om_from, m->omega_l, m->ol_from, m->rho_crit, u->mass_name,
                fk_unit_power(u->length_name, -3, un, sizeof un), m->rho_from, u->mass_name, un,
                m->rho[FK_SO_200C] * u->mass / pow(u->length, 3), m->rho[FK_SO_500C] * u->mass / pow(u->length, 3),
                m->rho[FK_SO_200M] * u->mass / pow(u->length, 3), m->rho[FK_SO_VIR] * u->mass / pow(u->length, 3),
                m->delta_vir, m->so_min ? m->so_min : FK_SO_MINPART);
    }
    if (m->unbind)
        fprintf(f, "# unbinding: every group at every level, the softened potential above from the remaining\n"
                   "#   members; the most unbound leave first (e >= e_max / 2) until none is unbound; fewer than\n"
                   "#   %" PRIu64 " bound members: not bound (n_bound 0)\n",
                m->minbound ? m->minbound : FK_UNBIND_MINBOUND);
}

void hs_masses_kv(fk_kvbuf *kv, const hs_masses *m)
{
    if (m->so) {
        fk_kv_u64(kv, "so", 1);
        fk_kv_dbl(kv, "omega_m", m->omega_m);
        fk_kv_dbl(kv, "omega_l", m->omega_l);
        fk_kv_dbl(kv, "scale_factor", m->a);
        fk_kv_dbl(kv, "rho_crit", m->rho_crit);
        fk_kv_dbl(kv, "delta_vir", m->delta_vir);
        fk_kv_u64(kv, "so_min", m->so_min ? m->so_min : FK_SO_MINPART);
        fk_kv_u64(kv, "so_particles", m->so_snap.n);
        for (int t = 0; t < 3; t++) {
            static const char *key[3] = {"so_gas", "so_dark", "so_star"};
            fk_kv_u64(kv, key[t], m->so_snap.ntype[t]);
        }
    }
    if (m->unbind) {
        fk_kv_u64(kv, "unbind", 1);
        fk_kv_u64(kv, "bound_min", m->minbound ? m->minbound : FK_UNBIND_MINBOUND);
    }
}

void hs_masses_chunks(const hs_masses *m, fk_writer *w, int nlevels, uint64_t nsource)
{
    if (!m->unbind) return;
    fk_error err = {0};
    for (int k = 0; k < nlevels; k++) {
        fk_chunk c;
        fk_chunk_init(&c, "BGID", "<u4", 0, nsource, 1);
        c.level = (uint32_t)k;
        if (fk_writer_put(w, &c, m->bgid[k], &err)) prog_fail(&err);
    }
}

void hs_masses_write_grp(const hs_masses *m, FILE *f, int nlevels, uint64_t nsource)
{
    if (m->grp_level >= nlevels)
        prog_die(EXIT_DATA, "option --level=%d: the stream has %d level%s", m->grp_level, nlevels, nlevels > 1 ? "s" : "");
    const uint32_t *b = m->bgid[m->grp_level];
    fprintf(f, "%" PRIu64 "\n", nsource);
    for (uint64_t r = 0; r < nsource; r++) fprintf(f, "%" PRIu32 "\n", b[r]);
}

void hs_masses_free(hs_masses *m, int nlevels)
{
    fk_so_grid_free(m->grid);
    free(m->bound), free(m->phi), free(m->so_pos), free(m->so_mass), free(m->so_ids);
    for (int k = 0; k < nlevels && k < HS_MAX_LEVELS; k++) free(m->bgid[k]);
}
