/* tree_ctrees.c - Consistent-Trees ASCII output of the merger trees and the table of progenitor links. */
#include "tree_ctrees.h"

#include <inttypes.h>
#include <string.h>

static const char *const header_lines[] = {
    "#Scale: Scale factor of halo.",
    "#ID: ID of halo (unique across the series: the halos of earlier snapshots first).",
    "#Desc_Scale: Scale of descendant halo, if applicable.",
    "#Descid: ID of descendant halo, if applicable (-1 none).",
    "#Num_prog: Number of progenitors.",
    "#Pid: Host halo ID (subhalos: the main subhalo of their group; -1 none).",
    "#Upid: Most massive host halo ID (the same as Pid here).",
    "#Desc_pid: Pid of descendant halo (if applicable).",
    "#Phantom: Nonzero for halos interpolated across timesteps (never here).",
    "#SAM_Mvir: Halo mass as Mvir (Msun/h).",
    "#Mvir: Halo mass, the Bryan and Norman virial mass when the catalogue has SO masses, else its own mass (Msun/h).",
    "#Rvir: Halo radius, 0 without SO masses (kpc/h comoving).",
    "#Rs: Scale radius, not measured, 0 (kpc/h comoving).",
    "#Vrms: Velocity dispersion, not measured, 0 (km/s physical).",
    "#mmp?: whether the halo is the main progenitor of its descendant (most massive history).",
    "#scale_of_last_MM: scale factor of the last major merger on its main branch (mass ratio at least 0.3), 0 none.",
    "#Vmax: Maximum circular velocity, of the main subhalo for groups (km/s physical).",
    "#X/Y/Z: Halo position (Mpc/h comoving).",
    "#VX/VY/VZ: Halo velocity (km/s physical, peculiar).",
    "#JX/JY/JZ: Halo angular momenta, not measured, 0.",
    "#Spin: Halo spin parameter, not measured, 0.",
    "#Breadth_first_ID: breadth-first ordering of halos within a tree.",
    "#Depth_first_ID: depth-first ordering of halos within a tree.",
    "#Tree_root_ID: ID of the halo at the last timestep in the tree.",
    "#Orig_halo_ID: Original halo ID from halo finder (the row of its catalogue, from 0).",
    "#Snap_num: Snapshot number from which halo originated.",
    "#Next_coprogenitor_depthfirst_ID: Depthfirst ID of next coprogenitor.",
    "#Last_progenitor_depthfirst_ID: Depthfirst ID of last progenitor.",
    "#Last_mainleaf_depthfirst_ID: Depthfirst ID of last progenitor on main progenitor branch.",
    "#Len: members in the halo finder's catalogue.",
    "#M_fof: the catalogue's mass of the halo (Msun/h).",
    "#M200c/M200b/M500c: spherical-overdensity masses, 0 without them (Msun/h).",
    "#Desc_count: members shared with the descendant.",
    "#Desc_score: the descendant's score, the sum over shared members of 1/rank.",
    "#Mainprog_id: ID of the main progenitor (most massive history), -1 none.",
    NULL};

int fk_mtree_write_ctrees(const fk_mtree *t, FILE *f, const char *generator, const char *kind, int64_t *offsets,
                          fk_error *err)
{
    fprintf(f, "#scale(0) id(1) desc_scale(2) desc_id(3) num_prog(4) pid(5) upid(6) desc_pid(7) phantom(8) "
               "sam_Mvir(9) Mvir(10) Rvir(11) rs(12) vrms(13) mmp?(14) scale_of_last_MM(15) vmax(16) x(17) y(18) "
               "z(19) vx(20) vy(21) vz(22) Jx(23) Jy(24) Jz(25) Spin(26) Breadth_first_ID(27) Depth_first_ID(28) "
               "Tree_root_ID(29) Orig_halo_ID(30) Snap_num(31) Next_coprogenitor_depthfirst_ID(32) "
               "Last_progenitor_depthfirst_ID(33) Last_mainleaf_depthfirst_ID(34) Len(35) M_fof(36) M200c(37) "
               "M200b(38) M500c(39) Desc_count(40) Desc_score(41) Mainprog_id(42)\n");
    const fk_treecat *c0 = &t->cat[t->nsnap - 1];
    fprintf(f, "#Omega_M = %f; Omega_L = %f; h0 = %f\n", c0->omega0, c0->omega_lambda, c0->hubble);
    fprintf(f, "#Full box size = %f Mpc/h\n", c0->box);
    for (int k = 0; header_lines[k]; k++) fprintf(f, "%s\n", header_lines[k]);
    fprintf(f, "#Consistent Trees format, written by %s from %d snapshots, the halos being %s\n", generator, t->nsnap,
            kind);
    fprintf(f, "#Tree root ID (and its tree below it, depth-first)\n");
    fprintf(f, "%" PRIu64 "\n", t->ntrees);
    const fk_treenode *nd = t->node;
    for (uint64_t r = 0; r < t->ntrees; r++) {
        fprintf(f, "#tree %" PRId64 "\n", t->order[t->tree_start[r]]);
        if (offsets && (offsets[r] = (int64_t)ftello(f)) < 0)
            return fk_fail(err, FK_EINVAL, "the trees' offsets need a regular file to write them in");
        for (int64_t k = t->tree_start[r]; k < t->tree_start[r + 1]; k++) {
            const int64_t g = t->order[k];
            const fk_treenode *x = &nd[g];
            const int s = fk_mtree_snap_of(t, g);
            const fk_treecat *c = &t->cat[s];
            const uint64_t h = (uint64_t)g - t->base[s];
            const int ds = x->desc >= 0 ? fk_mtree_snap_of(t, x->desc) : -1;
            const int64_t pid = c->pid[h] >= 0 ? (int64_t)t->base[s] + c->pid[h] : -1;
            int64_t dpid = -1;
            if (ds >= 0) {
                const int64_t dp = t->cat[ds].pid[(uint64_t)x->desc - t->base[ds]];
                dpid = dp >= 0 ? (int64_t)t->base[ds] + dp : -1;
            }
            const double so[3] = {c->m200c ? c->m200c[h] : 0, c->m200m ? c->m200m[h] : 0, c->m500c ? c->m500c[h] : 0};
            const int mmp = x->desc >= 0 && nd[x->desc].mainprog == g;
            fprintf(f, "%.8f %" PRId64 " %.8f %" PRId64 " %" PRIu32 " %" PRId64 " %" PRId64 " %" PRId64 " 0 %.6e %.6e %.6g 0 0 %d %.8f %.6g "
                       "%.7g %.7g %.7g %.6g %.6g %.6g 0 0 0 0 %" PRId64 " %" PRId64 " %" PRId64 " %" PRIu64 " %d %" PRId64 " %" PRId64
                       " %" PRId64 " %" PRIu64 " %.6e %.6e %.6e %.6e %" PRIu64 " %.6g %" PRId64 "\n",
                    c->time, g, ds >= 0 ? t->cat[ds].time : 0.0, x->desc, x->nprog, pid, pid, dpid, c->mvir[h],
                    c->mvir[h], c->rvir ? c->rvir[h] : 0.0, mmp, x->last_mm, c->vmax[h], c->pos[3 * h],
                    c->pos[3 * h + 1], c->pos[3 * h + 2], c->vel[3 * h], c->vel[3 * h + 1], c->vel[3 * h + 2], x->bf,
                    x->df, x->root, h, t->snapnum[s], x->next_coprog, x->last_prog, x->last_mainleaf, c->len[h],
                    c->mass[h], so[0], so[1], so[2], x->desc_count, x->desc_score, x->mainprog);
        }
    }
    (void)err;
    return FK_OK;
}

int fk_mtree_write_locations(const fk_mtree *t, FILE *loc, FILE *forests, const char *treefile, const int64_t *offsets,
                             fk_error *err)
{
    (void)err;
    fprintf(loc, "#TreeRootID FileID Offset Filename\n");
    fprintf(forests, "#TreeRootID ForestID\n");
    for (uint64_t r = 0; r < t->ntrees; r++) {
        const int64_t root = t->order[t->tree_start[r]];
        fprintf(loc, "%" PRId64 " 0 %" PRId64 " %s\n", root, offsets[r], treefile);
        fprintf(forests, "%" PRId64 " %" PRId64 "\n", root, root);
    }
    return FK_OK;
}

int fk_mtree_write_links(const fk_mtree *t, FILE *f, const char *generator, fk_error *err)
{
    fprintf(f, "# %s: every pair of halos of two snapshots that share members\n", generator);
    fprintf(f, "# prog_snap prog desc_snap desc: snapshot numbers and catalogue rows (from 0)\n");
    fprintf(f, "# count: shared members; score: the sum over them of 1/rank (rank 1: the first member in prog's list)\n");
    fprintf(f, "# is_desc: desc is prog's descendant; is_main: prog is desc's main progenitor\n");
    fprintf(f, "# prog_snap prog desc_snap desc count score is_desc is_main\n");
    for (int k = 0; k < t->nsteps; k++) {
        const fk_treestep *st = &t->steps[k];
        for (uint64_t i = 0; i < st->n; i++) {
            const fk_treelink *l = &st->links[i];
            const int64_t a = (int64_t)(t->base[st->from] + l->prog), b = (int64_t)(t->base[st->to] + l->desc);
            fprintf(f, "%d %" PRIu32 " %d %" PRIu32 " %" PRIu64 " %.6g %d %d\n", t->snapnum[st->from], l->prog,
                    t->snapnum[st->to], l->desc, l->count, l->score, t->node[a].desc == b, t->node[b].mainprog == a);
        }
    }
    (void)err;
    return FK_OK;
}
