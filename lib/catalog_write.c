/* catalog_write.c - halostats' catalogue written: the text header and rows, CSV, and the stream's HCOL record and HALO chunks (catalog.h reads them back). */
#include "catalog_write.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

const char *fk_catw_frame_word(const fk_catw *w, const fk_halo_column *c)
{
    if (c->dim == FK_DIM_1) return "";
    return c->dim == FK_DIM_LENGTH && w->comoving ? "comoving: " : "physical: ";
}

int fk_catw_shown(const fk_catw *w, const fk_halo_column *c)
{
    return !(c->flags & (FK_HCOL_SO | FK_HCOL_UNBIND)) || (c->flags & w->flags);
}

void fk_catw_header(FILE *f, const fk_catw *w, const fk_hsin *in, const uint64_t *ng)
{
    const fk_snap *s = &in->snap;
    const fk_halo_units *u = w->units;
    char un[3][64];
    fprintf(f, "# halostats (fofkit %s): one line per friends-of-friends group, level by level, by group id\n",
            FK_VERSION);
    fprintf(f, "# input %s: source '%s', %" PRIu64 " particles of %" PRIu64 ", time %.10g\n", in->name, s->source, s->n,
            s->nsource, s->time);
    fprintf(f, "# box %.10g origin %.10g periodic %d (the stream's length unit)%s\n", s->box, s->origin, s->periodic,
            in->link_isolated ? ": the snapshot's box is periodic, but foflink --no-periodic linked it with isolated "
                                "boundaries, and so are the groups measured" : "");
    fprintf(f, "# levels %d%s\n", in->nlevels, in->nlevels > 1 ? ": a group of level k lies inside group host of level k-1" : "");
    for (int k = 0; k < in->nlevels; k++) {
        const fk_hsin_level *L = &in->lv[k];
        fprintf(f, "# level %d: ", k);
        if (L->have_l)
            fprintf(f, "linking length l %.10g (b %.10g, psi %.10g; psi 0 is 3D linking)", L->l, L->have_b ? L->b : 0,
                    L->psi);
        else
            fprintf(f, "linking length unknown (no LINK chunk)");
        fprintf(f, ", %" PRIu64 " groups, min size ", ng[k]);
        if (L->have_grps)
            fprintf(f, "%" PRIu64, L->grps.minsize);
        else
            fprintf(f, "unknown (no GRPS chunk)");
        if (k > 0 && !L->gpar) fprintf(f, ", hosts from the members (no GPAR chunk)");
        fputc('\n', f);
    }
    fprintf(f, "# units: length %s, mass %s, velocity %s; one stream unit is %.10g, %.10g, %.10g of them\n",
            u->length_name, u->mass_name, u->velocity_name, u->length, u->mass, u->velocity);
    fk_halo_units_name(u, FK_DIM_LENGTH, un[0], sizeof un[0]); /* the softening's line below names it too */
    if (w->no_G)
        fprintf(f, "# G: none, the stream has no units: phi_mbp, vmax and lambda are nan (give --G=VALUE)\n");
    else
        fprintf(f, "# G = %.10g %s %s / %s (%s)\n", w->G_out, fk_halo_units_name(u, FK_DIM_LENGTH, un[0], sizeof un[0]),
                fk_halo_units_name(u, FK_DIM_VELOCITY2, un[1], sizeof un[1]),
                fk_halo_units_name(u, FK_DIM_MASS, un[2], sizeof un[2]),
                w->have_G == 1 ? "given" : w->have_G == 2 ? "from the stream's units" : "1 in the stream's units");
    if (w->comoving)
        fprintf(f, "# comoving stream at a = %.10g (z = %.10g), H(a) = %.10g %s per %s physical: lengths comoving,\n"
                   "#   velocities peculiar (VEL a^%g), the rest physical, as Gadget-4's SUBFIND: the Hubble\n"
                   "#   flow H(a) a dx about the centre of mass added to sigma_v and the unbinding's energies,\n"
                   "#   potentials and vmax with physical r = a dx (G / a over comoving lengths), the softening\n"
                   "#   comoving (physical eps a)\n",
                w->a, 1 / w->a - 1, w->hflow / w->a * u->velocity / u->length, u->velocity_name, u->length_name,
                in->snap.vel_a_scaling);
    else
        fprintf(f, "# physical stream (no comoving key): lengths and velocities as stored, no Hubble flow\n");
    if (w->centre == FK_CENTRE_MBP) {
        fprintf(f, "# centre: the most bound member, least phi_i = -G sum_(j != i) m_j / sqrt(r_ij^2 + eps^2),\n"
                   "#   eps %.10g %s (%s%s); exact sums for groups of up to %" PRIu64 " members, else a\n"
                   "#   Barnes-Hut tree (theta %.3g, quadrupoles), then exact sums for its candidates (tree phi\n"
                   "#   within %.3g |phi| of its least); on the %s\n",
                w->pot->eps * u->length, un[0], w->have_eps ? "given" : "0.05 box / n^(1/3)",
                w->eps_capped ? "; capped: --softening-max-phys / a" : "", w->pot->nexact, w->pot->theta,
                fk_pot_tolerance(w->pot), w->gpu ? "GPU" : "CPU");
    } else {
        fprintf(f, "# centre: the centre of mass (no potentials: --centre=com)\n");
    }
    fprintf(f, "# groups are unwrapped about the member with the lowest ID, assuming a group spans less than\n"
               "# half the box; a group of total mass 0 gets unweighted means; M(<=r): mass of the members\n"
               "# within r of the centre\n");
    if (w->masses_header) w->masses_header(f, w->masses_ctx);
    fprintf(f, "# column name unit: definition\n");
    size_t col = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!fk_catw_shown(w, c)) continue;
        fprintf(f, "# %2zu %-8s %-10s %s%s\n", ++col, c->name, fk_halo_units_name(u, c->dim, un[0], sizeof un[0]),
                fk_catw_frame_word(w, c), c->desc);
    }
    fputc('#', f);
    for (size_t k = 0; k < fk_halo_ncolumns; k++)
        if (fk_catw_shown(w, &fk_halo_columns[k])) fprintf(f, " %s", fk_halo_columns[k].name);
    fputc('\n', f);
}

/* Rows [g0, g1) into f. */
static void format_rows(FILE *f, const fk_catw *w, const fk_halo *h, uint64_t g0, uint64_t g1, char sep)
{
    char buf[64];
    for (uint64_t g = g0; g < g1; g++) {
        int first = 1;
        for (size_t k = 0; k < fk_halo_ncolumns; k++) {
            if (!fk_catw_shown(w, &fk_halo_columns[k])) continue;
            fk_halo_format(&h[g], &fk_halo_columns[k], w->units, buf, sizeof buf);
            if (!first) fputc(sep, f);
            fputs(buf, f);
            first = 0;
        }
        fputc('\n', f);
    }
}

/* The rows formatted on every core, a block at a time, and written in order
 * (a block that finds no memory is formatted in its turn). */
void fk_catw_rows(FILE *f, const fk_catw *w, const fk_halo *h, uint64_t ng, char sep)
{
    enum { BLOCK = 1024 };
#pragma omp parallel for ordered schedule(static, 1)
    for (uint64_t g0 = 0; g0 < ng; g0 += BLOCK) {
        const uint64_t g1 = g0 + BLOCK < ng ? g0 + BLOCK : ng;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (m) format_rows(m, w, h, g0, g1, sep);
        if (m && fclose(m) != 0) m = NULL, free(text), text = NULL;
#pragma omp ordered
        {
            if (m)
                fwrite(text, 1, len, f);
            else
                format_rows(f, w, h, g0, g1, sep);
        }
        free(text);
    }
}

void fk_catw_csv_header(FILE *f, const fk_catw *w)
{
    int first = 1;
    char un[64];
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!fk_catw_shown(w, c)) continue;
        /* name[unit], the unit as the text header names it; a pure number bare */
        fprintf(f, "%s%s", first ? "" : ",", c->name);
        if (c->dim != FK_DIM_1) fprintf(f, "[%s]", fk_halo_units_name(w->units, c->dim, un, sizeof un));
        first = 0;
    }
    fputc('\n', f);
}

int fk_catw_hcol(fk_writer *out, const fk_catw *w, int nlevels, fk_error *err)
{
    fk_kvbuf kv;
    char key[32], val[512], un[64];
    fk_kv_init(&kv);
    size_t ncol = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) ncol += fk_catw_shown(w, &fk_halo_columns[k]);
    fk_kv_u64(&kv, "columns", ncol);
    fk_kv_u64(&kv, "levels", (uint64_t)nlevels);
    fk_kv_str(&kv, "centre", w->centre == FK_CENTRE_MBP ? "mbp" : "com");
    fk_kv_dbl(&kv, "G", w->G_out);
    if (w->centre == FK_CENTRE_MBP) {
        fk_kv_dbl(&kv, "softening", w->pot->eps * w->units->length);
        fk_kv_dbl(&kv, "theta", w->pot->theta);
        fk_kv_u64(&kv, "exact_max", w->pot->nexact);
        fk_kv_dbl(&kv, "tolerance", fk_pot_tolerance(w->pot));
        fk_kv_str(&kv, "device", w->gpu ? "gpu" : "cpu");
    }
    fk_kv_dbl(&kv, "length_unit", w->units->length);
    fk_kv_dbl(&kv, "mass_unit", w->units->mass);
    fk_kv_dbl(&kv, "velocity_unit", w->units->velocity);
    fk_kv_str(&kv, "length_name", w->units->length_name);
    fk_kv_str(&kv, "mass_name", w->units->mass_name);
    fk_kv_str(&kv, "velocity_name", w->units->velocity_name);
    if (w->masses_kv) w->masses_kv(&kv, w->masses_ctx);
    /* the columns that hold whole numbers (ids, counts; -1 for none), for readers' types */
    char ints[256] = "";
    for (size_t k = 0; k < fk_halo_ncolumns; k++)
        if (fk_catw_shown(w, &fk_halo_columns[k]) && fk_halo_columns[k].type == FK_HCOL_U64)
            snprintf(ints + strlen(ints), sizeof ints - strlen(ints), "%s%s", ints[0] ? " " : "", fk_halo_columns[k].name);
    fk_kv_str(&kv, "integer_columns", ints);
    /* a comoving stream: which columns are comoving lengths (the others with a unit physical) */
    fk_kv_u64(&kv, "comoving", (uint64_t)w->comoving);
    if (w->comoving) {
        char com[512] = "";
        for (size_t k = 0; k < fk_halo_ncolumns; k++)
            if (fk_catw_shown(w, &fk_halo_columns[k]) && !strcmp(fk_catw_frame_word(w, &fk_halo_columns[k]), "comoving: "))
                snprintf(com + strlen(com), sizeof com - strlen(com), "%s%s", com[0] ? " " : "", fk_halo_columns[k].name);
        fk_kv_dbl(&kv, "scale_factor", w->a);
        fk_kv_dbl(&kv, "hubble_of_a", w->hflow / w->a * w->units->velocity / w->units->length);
        fk_kv_str(&kv, "comoving_columns", com);
    }
    size_t col = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!fk_catw_shown(w, c)) continue;
        snprintf(key, sizeof key, "column_%zu", ++col);
        snprintf(val, sizeof val, "%s %s %s", c->name, fk_halo_units_name(w->units, c->dim, un, sizeof un), c->desc);
        fk_kv_str(&kv, key, val);
    }
    char *text = NULL;
    int st = fk_kv_finish(&kv, &text, err);
    if (!st) st = fk_writer_text(out, "HCOL", 0, text, err);
    free(text);
    return st;
}

int fk_catw_halo(fk_writer *out, const fk_catw *w, int k, const fk_halo *h, uint64_t ng, fk_error *err)
{
    size_t ncol = 0;
    for (size_t c = 0; c < fk_halo_ncolumns; c++) ncol += fk_catw_shown(w, &fk_halo_columns[c]);
    double *rows = malloc(ng && ncol ? ng * ncol * sizeof *rows : 1);
    if (!rows) return fk_fail(err, FK_ENOMEM, "out of memory for the HALO chunk of %" PRIu64 " groups", ng);
    for (uint64_t g = 0; g < ng; g++) {
        size_t j = 0;
        for (size_t c = 0; c < fk_halo_ncolumns; c++)
            if (fk_catw_shown(w, &fk_halo_columns[c])) rows[g * ncol + j++] = fk_halo_value(&h[g], &fk_halo_columns[c], w->units);
    }
    fk_chunk c;
    fk_chunk_init(&c, "HALO", "<f8", 0, ng, (uint32_t)ncol);
    c.level = (uint32_t)k;
    int st = fk_writer_put(out, &c, rows, err);
    free(rows);
    return st;
}
