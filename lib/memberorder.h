/* memberorder.h - the order of each halo's members in the catalogues: most bound first (binding energy, or distance from the most bound member), ties by ID. */
#ifndef FK_MEMBERORDER_H
#define FK_MEMBERORDER_H

#include <stdint.h>

#include "halostats.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * halostats lists each halo's members most bound first, as Gadget-4's
 * SUBFIND lists a subhalo's (src/fof/fof.h,
 * fof_compare_subfind_data_GroupNr_SubNr_Egy_Key: by group, subhalo, then
 * ascending DM_BindingEnergy), so that a merger tree can weigh a shared
 * member by 1/rank (SubLink, Rodriguez-Gomez et al. 2015). A member's key,
 * smallest first, ties to the lower original index (ID), so that the order
 * depends on no stream order, rank count or thread count:
 *
 *   FK_MORDER_ENERGY  e_i = phi_i + |u_i|^2 / 2, the specific binding energy
 *                     in the halo: phi_i the softened potential from its
 *                     other members (potential.h: exact sums, or the CPU's
 *                     tree above nexact members), u_i the velocity about the
 *                     halo's mass-weighted mean velocity v, in a comoving
 *                     stream v_pec,i - v + H(a) a (d_i - d_cm) as the
 *                     unbinding's frame (unbind.h, Gadget-4's
 *                     subfind_unbind.cc)
 *   FK_MORDER_RADIUS  r_i^2 = |x_i - xc|^2 (minimum image): nearest the
 *                     centre, the most bound member, first; the order of the
 *                     potential of the halo's mass spherically averaged about
 *                     it (which rises outward). halostats orders by it where
 *                     the potentials come from a device: a GPU's are not the
 *                     CPU's bit for bit (gpu/potential.cu sums exactly, in
 *                     another order, where the CPU takes its tree), while r_i
 *                     is the same from every device and rank count
 *   FK_MORDER_ID      ascending original index (centres of mass: no
 *                     potentials)
 */
enum { FK_MORDER_ID = 0, FK_MORDER_RADIUS = 1, FK_MORDER_ENERGY = 2 };

/* "id", "radius", "binding_energy": the names the catalogues record
 * (HDF5's IDs/MemberOrder, the stream's MORDER record). Can't fail. */
const char *fk_morder_name(int order);

/* The order named (fk_morder_name's), or -1. */
int fk_morder_parse(const char *name);

/* r^2 of stream particle i of in about xc (each axis the minimum image in a
 * periodic box), in double from the binary32 position. Can't fail. */
double fk_morder_r2(const fk_halo_input *in, uint64_t i, const double xc[3]);

/* e_i of stream particle i of the halo h (after fk_halostats_compute: its
 * ref, x and v), whose potential is phi. Can't fail. */
double fk_morder_energy(const fk_halo_input *in, const fk_halo *h, uint64_t i, double phi);

/* key[i] for every stream particle i of in that lies in a halo: in its
 * subhalo sub[i'] (i' = in->ids[i]; 1 + the index into subs, 0 none; sub
 * NULL: none) by energy (with phi: n potentials by stream index, from the
 * subhalo's members) or by r^2 about the subhalo's xc (phi NULL); else in
 * its group gid[i'] (1 + the index into groups) by r^2 about the group's
 * xc. Others are set to 0. Every core. Can't fail. */
void fk_morder_keys(const fk_halo_input *in, const uint32_t *gid, const uint32_t *sub, const fk_halo *groups,
                    const fk_halo *subs, const double *phi, double *key);

/* Sorts rows[0..n) (stream rows) by ascending key[row], ties by ids[row]
 * (the original index), with *scratch (NULL at first, grown as needed, 24
 * bytes a member; free() it after). One thread. FK_ENOMEM (rows untouched). */
int fk_morder_sort(uint64_t *rows, uint64_t n, const double *key, const uint64_t *ids, void **scratch,
                   uint64_t *cap);

#ifdef __cplusplus
}
#endif

#endif
