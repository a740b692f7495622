/* spacingopt.c - foflink's --spacing: the mean spacing -b multiplies, said with -v; a hint for zoom-in snapshots. */
#include "spacingopt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "prog.h"

int spacing_needs_mass(const fk_spacing_spec *spec)
{
    return spec->kind != FK_SPACING_ALL;
}

int spacing_needs_type(const fk_spacing_spec *spec)
{
    return spec->kind == FK_SPACING_LIGHTEST || spec->kind == FK_SPACING_TYPES;
}

void spacing_report(const fk_spacing_spec *spec, int given, const fk_spacing_sums *s, double neff, double box, double b,
                    fk_link_meta *meta)
{
    static const char *type_name[3] = {"gas", "dark", "star"};
    static char of[64];
    const double spacing = box / cbrt(neff);
    const uint64_t n = s->n[0] + s->n[1] + s->n[2];
    fk_spacing_name(spec, of, sizeof of);
    meta->spacing = spacing, meta->spacing_of = of, meta->neff = neff;
    prog_info("-b: the mean spacing box / n_eff^(1/3) = %.9g of the %s particles (n_eff %.9g; %" PRIu64
              " particles in the stream)", spacing, spec->kind == FK_SPACING_LIGHTEST ? "lightest" : of, neff, n);
    int t;
    double spread = fk_spacing_spread(s, &t);
    if (given || !(spread > 2)) return;
    const double all = box / cbrt((double)(n ? n : 1));
    prog_note("hint: the %s particles' masses span a factor of %.4g (a zoom-in snapshot?): -b %g is a fraction of the "
              "mean spacing of the lightest particles, %.6g (l = %.6g), not of every particle's, %.6g (l = %.6g with "
              "--spacing=all); see foflink(1), THE MEAN SPACING",
              type_name[t], spread, b, spacing, b * spacing, all, b * all);
}

int attach_spacing(const fk_snap *snap, const fk_spacing_sums *s, unsigned link_types, int baryons, double b,
                   double *neff, fk_link_meta *meta, fk_error *err)
{
    static char of[64];
    fk_spacing_spec spec = {FK_SPACING_TYPES, link_types, 0};
    double spacing;
    if (fk_spacing_density_known(snap, baryons) && fk_spacing_density(snap, s, link_types, baryons, neff, &spacing, err) == FK_OK) {
        char t[64];
        snprintf(of, sizeof of, "density %s", fk_spacing_name(&spec, t, sizeof t) + 6);
        meta->spacing = spacing, meta->spacing_of = of, meta->neff = *neff;
        double m = 0, n = 0;
        for (int t = 0; t < 3; t++)
            if (link_types & (1u << t)) m += fk_spacing_mass(s, t), n += (double)s->n[t];
        prog_info("-b: the mean spacing of the %s particles by Gadget-4's density rule, (m / rho)^(1/3) = %.9g "
                  "(m = %.9g their mean mass, rho = (Omega0%s) rho_crit = %.9g; l = %.9g)",
                  of + 8, spacing, m / n, baryons ? " - OmegaBaryon" : "", m / n / (spacing * spacing * spacing),
                  b * spacing);
        return FK_OK;
    }
    int st = fk_spacing_neff(&spec, s, neff, err);
    if (st) return st;
    spacing_report(&spec, 1, s, *neff, snap->box, b, meta);
    return FK_OK;
}
