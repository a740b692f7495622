/* gsnap_dist.c - Gadget-family snapshots converted under mpirun: rank r's whole files or slice into a stream of its own, all committed or none. */
#include "gsnap_dist.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "fileio.h"
#include "gsnap_write.h"

#include <inttypes.h>

/* Collective: with F >= R files, sets mine to this rank's whole files (see
 * gsnap_dist.h); leaves it (slices) otherwise. FK_OK, or on every rank the
 * lowest failing rank's error. */
static int whole_files(const char *path, fk_gsnap_opts *mine, fk_gsnap_reader read, void *info, fk_gsnap *s,
                       fk_gsnap_ranks *run, fk_error *err)
{
    const int rank = run->rank, size = run->size;
    /* F from file 0's header, read by rank 0 alone (it owns file 0) */
    fk_gsnap_opts h = *mine;
    h.headers_only = 1;
    h.file_lo = 0;
    h.file_hi = 1;
    uint64_t f = 0;
    int st = FK_OK;
    if (rank == 0) {
        st = read(path, &h, s, info, err);
        if (!st) f = s->hdr.nfiles > 0 ? (uint64_t)s->hdr.nfiles : 1;
        fk_gsnap_free(s);
    }
    if ((st = fk_dist_agree(st, err, NULL))) return st;
    fk_dist_max(&f, 1);
    run->nfiles = (int)f;
    if (f < (uint64_t)size) return FK_OK;
    const int lo = (int)(f * (uint64_t)rank / (uint64_t)size), hi = (int)(f * (uint64_t)(rank + 1) / (uint64_t)size);
    /* this rank's counts from its files' headers; the ranks' counts side by side, summed: an exclusive scan */
    h.file_lo = lo;
    h.file_hi = hi;
    st = read(path, &h, s, info, err);
    const fk_gsnap_header hdr = s->hdr;
    uint64_t mine_n[FK_GSNAP_NTYPES];
    memcpy(mine_n, s->nfile, sizeof mine_n);
    fk_gsnap_free(s);
    if (!st && hdr.nfiles != (int)f)
        st = fk_fail(err, FK_EFORMAT, "%s: file %d's header says the snapshot has %d files, file 0's says %d", path, lo,
                     hdr.nfiles, (int)f);
    if ((st = fk_dist_agree(st, err, NULL))) return st;
    const size_t nv = (size_t)size * FK_GSNAP_NTYPES;
    uint64_t *all = calloc(nv, sizeof *all);
    int ok = all != NULL;
    if (!fk_dist_all(ok)) {
        free(all);
        return fk_fail(err, FK_ENOMEM, "out of memory for the counts of %d ranks", size);
    }
    memcpy(all + (size_t)rank * FK_GSNAP_NTYPES, mine_n, sizeof mine_n);
    fk_dist_sum(all, (int)nv);
    uint64_t first[FK_GSNAP_NTYPES] = {0}, total[FK_GSNAP_NTYPES] = {0};
    for (int r = 0; r < size; r++)
        for (int t = 0; t < FK_GSNAP_NTYPES; t++) {
            if (r < rank) first[t] += all[(size_t)r * FK_GSNAP_NTYPES + t];
            total[t] += all[(size_t)r * FK_GSNAP_NTYPES + t];
        }
    free(all);
    for (int t = 0; t < hdr.ntypes && t < FK_GSNAP_NTYPES && !st; t++)
        if (total[t] != hdr.ntotal[t])
            st = fk_fail(err, FK_EFORMAT,
                         "%s: inconsistent counts: the %d files hold %" PRIu64 " particles of type %d, the header of "
                         "file %d says %" PRIu64,
                         path, (int)f, total[t], t, lo, hdr.ntotal[t]);
    if ((st = fk_dist_agree(st, err, NULL))) return st;
    mine->file_lo = lo;
    mine->file_hi = hi;
    memcpy(mine->file_first, first, sizeof first);
    memcpy(mine->file_count, mine_n, sizeof mine_n);
    run->file_lo = lo;
    run->file_hi = hi;
    return FK_OK;
}

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
    double t0 = fk_now(), t1 = t0;
    char *oname = NULL;
    fk_output *out = NULL;
    /* the outputs first (a name that cannot be written fails before anything is read), then
     * whole files when there are enough (a pipe is read by slices) */
    st = fk_dist_expand(output, run->rank, &oname, err);
    if (!st) st = fk_output_open(&out, oname, 1, force, err);
    st = fk_dist_agree(st, err, NULL);
    if (!st && strcmp(path, "-")) st = whole_files(path, &mine, read, info, s, run, err);
    if (!st && mine.file_hi == 0) {
        mine.slice = (uint32_t)run->rank;
        mine.nslices = (uint32_t)run->size;
    }
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
    run->bytes = s->bytes;
    run->n_all = s->n;
    fk_dist_sum(&run->n_all, 1);
    /* every rank's temporary is gone before any rank returns (mpirun may stop the others when one exits) */
    fk_dist_all(1);
    return st;
}
