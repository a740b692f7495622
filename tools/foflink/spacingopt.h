/* spacingopt.h - foflink's --spacing: what -b is a fraction of, said with -v, and a hint when the masses differ widely. */
#ifndef FOFLINK_SPACINGOPT_H
#define FOFLINK_SPACINGOPT_H

#include "linkrun.h"
#include "spacing.h"

/* The chunks -b needs to take the mean spacing of spec: MASS (not for
 * "all") and TYPE (for "lightest" and named types). */
int spacing_needs_mass(const fk_spacing_spec *spec);
int spacing_needs_type(const fk_spacing_spec *spec);

/* After n_eff of spec over the sums s (of every rank): with -v, the mean
 * spacing and what it is of; when spec was not given and one type's masses
 * span more than a factor 2, a hint saying which spacing -b took and the
 * other (--spacing=all) (given set: no hint). b is level 0's -b, box the
 * box. Fills meta's spacing keys. */
void spacing_report(const fk_spacing_spec *spec, int given, const fk_spacing_sums *s, double neff, double box, double b,
                    fk_link_meta *meta);

/* A hydro run's spacing when --spacing is not given: Gadget-4's density
 * rule over the linked types when snap has the units and cosmology for it
 * (fk_spacing_density), else their own mean spacing (--spacing=TYPES);
 * said with -v, into *neff and meta. FK_EINVAL when the linked types have
 * no particles. */
int attach_spacing(const fk_snap *snap, const fk_spacing_sums *s, unsigned link_types, int baryons, double b,
                   double *neff, fk_link_meta *meta, fk_error *err);

#endif
