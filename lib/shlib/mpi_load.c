/* mpi_load.c - fofkit_fof_mpi of libfofkit.so: libfofkit_mpi.so (dist_api.c, linked with libmpi) opened at the first call, so that loading libfofkit loads no MPI. */
#define _GNU_SOURCE /* dladdr */
/* Built with MPI only: without it libfofkit.so takes dist_api.c's stub (the Makefile's SHLIB_OBJ). */
#include <mpi.h>

#include "api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef FK_HAVE_MPI
#error "mpi_load.c is built with MPI only (FK_HAVE_MPI)"
#endif

/* FK_MPI_LIBRARY: the library's name, libfofkit_mpi.so.MAJOR, as the Makefile builds and installs it
 * beside libfofkit.so.MAJOR (it defines the name). */
#ifndef FK_MPI_LIBRARY
#error "FK_MPI_LIBRARY (the MPI library's soname) is defined by the Makefile"
#endif

typedef int fof_mpi_fn(MPI_Comm, const fofkit_particles *, const fofkit_fof_options *, uint64_t *const *,
                       fofkit_fof_result *, fofkit_error *);

/* fofkit_fof_mpi of libfofkit_mpi.so: opened from the directory libfofkit.so was loaded from (the
 * build tree, PREFIX/lib, a Python package), else by the dynamic linker's search; NULL with err
 * set when neither opens. Opened once: concurrent first calls each open it, dlopen counts them. */
static fof_mpi_fn *fof_mpi_load(fk_error *err)
{
    static fof_mpi_fn *fn;
    fof_mpi_fn *f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (f) return f;
    void *h = NULL;
    Dl_info self;
    char path[4096], why[512] = "";
    if (dladdr((void *)fof_mpi_load, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
        int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
        if ((size_t)snprintf(path, sizeof path, "%.*s/%s", dir, self.dli_fname, FK_MPI_LIBRARY) < sizeof path &&
            !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof why, "%s", dlerror());
    }
    if (!h && !(h = dlopen(FK_MPI_LIBRARY, RTLD_NOW | RTLD_LOCAL))) {
        fk_fail(err, FK_EUNSUP, "cannot load %s, which holds the MPI calls: %s", FK_MPI_LIBRARY,
                why[0] ? why : dlerror());
        return NULL;
    }
    if (!(f = (fof_mpi_fn *)dlsym(h, "fofkit_fof_mpi"))) {
        fk_fail(err, FK_EUNSUP, "%s has no fofkit_fof_mpi: %s", FK_MPI_LIBRARY, dlerror());
        dlclose(h);
        return NULL;
    }
    __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    return f;
}

int fofkit_fof_mpi(MPI_Comm comm, const fofkit_particles *p, const fofkit_fof_options *o, uint64_t *const *sink,
                   fofkit_fof_result *r, fofkit_error *e)
{
    fk_error err = {0};
    fof_mpi_fn *f = fof_mpi_load(&err);
    return f ? f(comm, p, o, sink, r, e) : fk_api_give(&err, "fofkit_fof_mpi", e);
}
