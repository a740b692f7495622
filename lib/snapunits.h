/* snapunits.h - a stream's own units (SNAP's optional unit keys) as halostats' default output units and G. */
#ifndef FK_SNAPUNITS_H
#define FK_SNAPUNITS_H

#include <stddef.h>

#include "halostats.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Constants in cgs: the kiloparsec and G as in CODATA 2018; the solar mass
 * as Gadget's (1.989e33 g), so that its usual mass unit of 1.989e43 g is
 * exactly 1e10 Msun/h. */
#define FK_KPC_CM 3.085678e21
#define FK_MSUN_G 1.989e33
#define FK_G_CGS 6.6743e-8

/* For every dimension (length, mass, velocity) whose output unit in u is
 * still the stream's (factor 1 and the default name), when s carries unit
 * keys: kpc, Msun and km/s, named "kpc/h" and "Msun/h" when the units are
 * per h. Returns how many dimensions were set (0 without unit keys); cannot
 * fail. */
int fk_snap_default_units(const fk_snap *s, fk_halo_units *u);

/* The name of s's length unit into buf: "kpc", "Mpc" ("kpc/h", "Mpc/h"
 * when per h) for a unit of 1 or 1000 kpc (to 1e-6), else "(X cm)"; ""
 * when s has no unit keys. Returns buf. Can't fail. */
const char *fk_snap_length_name(const fk_snap *s, char *buf, size_t size);

/* G in the stream's units, from s's unit keys (G M / L has no h left when
 * the units are per h); 0 when s has none. */
double fk_snap_G(const fk_snap *s);

/* H0 = 100 h km/s/Mpc in the stream's velocity unit per length unit (0.1
 * in Gadget's km/s and kpc/h, whatever h), from s's unit keys and hubble;
 * 0 when s has no units or no positive hubble. */
double fk_snap_H0(const fk_snap *s);

/* The physical frame of a comoving stream, as Gadget-4's SUBFIND takes it
 * (subfind_properties.cc, subfind_get_factors: fac_comov_to_phys = a,
 * fac_vel_to_phys, fac_hubbleflow = H(a)): *a = SNAP's time, *vscale =
 * a^vel_a_scaling (VEL * vscale is the peculiar velocity), *hflow = H(a) a,
 * the Hubble flow's velocity per comoving stream length, with H(a) = H0
 * sqrt(Omega_m a^-3 + (1 - Omega_m - Omega_L) a^-2 + Omega_L). Returns 1
 * when s is comoving and has what this needs, 0 when s is not comoving
 * (nothing set), -1 when it is but lacks units, h or the cosmology (nothing
 * set). Can't fail otherwise. */
int fk_snap_frame(const fk_snap *s, double *a, double *vscale, double *hflow);

#ifdef __cplusplus
}
#endif

#endif
