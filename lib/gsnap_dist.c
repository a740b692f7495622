/* gsnap_dist.c - Gadget-family snapshots converted under mpirun: rank r's slice into a stream of its own, all committed or none. */
#include "gsnap_dist.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "fileio.h"
#include "gsnap_write.h"

int fk_gsnap_convert_ranks(const char *path, const char *source, const char *output, int force, int zlevel,
                           const fk_gsnap_opts *o, fk_gsnap_reader read, void *info, fk_gsnap *s, fk_gsnap_ranks *run,
                           fk_error *err)
{
    memset(s, 0, sizeof *s);
    memset(run, 0, sizeof *run);
    int st = fk_dist_init(&run->rank, &run->size, err);
    if (st) {
        /* no MPI: every rank says the same, so each fails alone */
        run->rank = fk_dist_env_rank();
        run->size = 1;
        return st;
    }
    fk_gsnap_opts mine = *o;
    mine.slice = (uint32_t)run->rank;
    mine.nslices = (uint32_t)run->size;
    char *oname = NULL;
    fk_output *out = NULL;
    double t0 = fk_now(), t1 = t0;
    st = fk_dist_expand(output, run->rank, &oname, err);
    if (!st) st = fk_output_open(&out, oname, 1, force, err);
    if (!st) st = read(path, &mine, s, info, err);
    t1 = fk_now();
    if (!st) st = fk_gsnap_write(s, source, fk_output_file(out), zlevel, err);
    run->read_s = t1 - t0;
    run->write_s = fk_now() - t1;
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK) {
        int committed = fk_output_commit(out, err);
        out = NULL;
        /* a rename that fails on one rank undoes those that succeeded */
        if ((st = fk_dist_agree(committed, err, NULL)) != FK_OK && committed == FK_OK) unlink(oname);
    }
    if (out) fk_output_abort(out);
    free(oname);
    run->n_all = s->n;
    fk_dist_sum(&run->n_all, 1);
    /* every rank's temporary is gone before any rank returns (mpirun may stop the others when one exits) */
    fk_dist_all(1);
    return st;
}
