/* hdf5out.c - halostats --format=hdf5: builds the Gadget-4 style catalogue (lib/halocat_hdf5) and writes it out. */
#include "hdf5out.h"

#include <errno.h>
#include <stdlib.h>

#include "halocat_hdf5.h"

int hdf5_check(void)
{
    if (!fk_halocat_hdf5_available())
        prog_die(EXIT_DATA, "--format=hdf5: this build has no HDF5 (install libhdf5-dev, then make config and rebuild)");
    return 1;
}

fk_output *hdf5_write(const prog_std *std, const fk_snap *snap, const float *mass, const uint64_t *ids,
                      const uint32_t *gid0, const uint32_t *gid1, fk_halo *const *halos, const uint64_t *ng, int have_mbp,
                      const fk_halo_units *units)
{
    fk_halocat cat = {.snap = snap, .n = snap->n, .mass = mass, .ids = ids, .gid0 = gid0, .gid1 = gid1,
                      .groups = halos[0], .ngroups = ng[0], .subs = gid1 ? halos[1] : NULL, .nsubs = gid1 ? ng[1] : 0,
                      .have_mbp = have_mbp, .units = units};
    fk_error err = {0};
    void *image;
    size_t size;
    if (fk_halocat_hdf5(&cat, &image, &size, &err)) prog_fail(&err);
    fk_output *out = prog_open_output(std, 1);
    if (fwrite(image, 1, size, fk_output_file(out)) != size) {
        fk_write_failed(&err, fk_output_name(out), NULL, errno);
        prog_fail(&err);
    }
    free(image);
    return out;
}
