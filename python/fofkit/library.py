"""fofkit.library - libfofkit (fofkit(3)) through ctypes: friends-of-friends groups and halostats' catalogue
of particle arrays in memory, numpy arrays used in place, GPU arrays (__cuda_array_interface__: CuPy,
PyTorch) on their GPU.

    gid = fofkit.fof(pos, b=0.2, box=1.0)                 # group of every particle (0: none)
    cat = fofkit.halos(pos, vel, gid, mass=m, box=1.0)    # a structured array, halostats' columns

The library is found, in order: $FOFKIT_LIB; the copy `pip install ./python` put beside this module;
the path it recorded (an installed libfofkit); the build tree of the sources this module sits in
(build/libfofkit.so); the system's (ctypes.util.find_library). Without it the stream reader works and
these calls raise LibraryError.
"""

import ctypes
import ctypes.util
import os
import threading

import numpy as np

from .stream import INTEGER_COLUMNS

LEVELS_MAX = 8
_DEVICES = {"auto": 0, "cpu": 1, "gpu": 2}
_CENTRES = {"mbp": 0, "com": 1}


class LibraryError(OSError):
    """libfofkit could not be found or loaded."""


class FofkitError(Exception):
    """A libfofkit call failed: .code is its status (fofkit.h's FOFKIT_E*), the message names the problem."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _Particles(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("n", ctypes.c_uint64), ("pos", ctypes.c_void_p),
                ("vel", ctypes.c_void_p), ("mass", ctypes.c_void_p), ("ids", ctypes.c_void_p),
                ("periodic", ctypes.c_int), ("box", ctypes.c_double), ("origin", ctypes.c_double)]


class _FofOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("nlevels", ctypes.c_int), ("b", ctypes.c_double * LEVELS_MAX),
                ("l", ctypes.c_double * LEVELS_MAX), ("psi", ctypes.c_double * LEVELS_MAX),
                ("psi_relative", ctypes.c_int), ("device", ctypes.c_int), ("nthreads", ctypes.c_int),
                ("minsize", ctypes.c_uint64)]


class _FofResult(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("group", ctypes.c_void_p * LEVELS_MAX),
                ("sink", ctypes.c_void_p * LEVELS_MAX), ("sizes", ctypes.POINTER(ctypes.c_uint64) * LEVELS_MAX),
                ("ngroups", ctypes.c_uint64 * LEVELS_MAX), ("nfound", ctypes.c_uint64 * LEVELS_MAX),
                ("l", ctypes.c_double * LEVELS_MAX), ("psi", ctypes.c_double * LEVELS_MAX),
                ("nlevels", ctypes.c_int), ("device", ctypes.c_int), ("seconds", ctypes.c_double),
                ("seconds_link", ctypes.c_double)]


class _HaloOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("centre", ctypes.c_int), ("G", ctypes.c_double),
                ("softening", ctypes.c_double), ("theta", ctypes.c_double), ("exact_max", ctypes.c_int64),
                ("so", ctypes.c_int), ("omega_m", ctypes.c_double), ("omega_l", ctypes.c_double),
                ("scale_factor", ctypes.c_double), ("rho_crit", ctypes.c_double), ("so_min", ctypes.c_uint64),
                ("unbind", ctypes.c_int), ("bound_min", ctypes.c_uint64), ("device", ctypes.c_int),
                ("nthreads", ctypes.c_int), ("comoving", ctypes.c_int), ("vel_scale", ctypes.c_double),
                ("hubble_flow", ctypes.c_double)]


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 512)]


_lib = None
_lock = threading.Lock()


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("FOFKIT_LIB")
    if env:
        yield env
        return
    for name in ("libfofkit.so.0", "libfofkit.so"):
        yield os.path.join(here, name)
    try:
        from . import _libpath  # written by pip install: an installed libfofkit
        yield _libpath.LIBRARY
    except ImportError:
        pass
    yield os.path.join(here, "..", "..", "build", "libfofkit.so")
    found = ctypes.util.find_library("fofkit")
    if found:
        yield found


def library():
    """The loaded libfofkit (a ctypes.CDLL); LibraryError when there is none."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if not path:
                continue
            if os.path.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib)
            _lib = lib
            return lib
        raise LibraryError("libfofkit not found (tried %s): build it with `make lib` in the fofkit sources, "
                           "`make install` it, or set FOFKIT_LIB to its path" % (", ".join(tried) or "nothing"))


def _declare(lib):
    P = ctypes.POINTER
    for name, struct in (("fofkit_particles_init", _Particles), ("fofkit_fof_options_init", _FofOptions),
                         ("fofkit_fof_result_init", _FofResult), ("fofkit_fof_result_free", _FofResult),
                         ("fofkit_halo_options_init", _HaloOptions)):
        getattr(lib, name).argtypes = [P(struct)]
        getattr(lib, name).restype = None
    lib.fofkit_fof.argtypes = [P(_Particles), P(_FofOptions), P(_FofResult), P(_Error)]
    lib.fofkit_fof.restype = ctypes.c_int
    lib.fofkit_halos.argtypes = [P(_Particles), ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, P(_HaloOptions),
                                 ctypes.c_void_p, ctypes.c_void_p, P(_Error)]
    lib.fofkit_halos.restype = ctypes.c_int
    lib.fofkit_halo_ncolumns.argtypes = [P(_HaloOptions)]
    lib.fofkit_halo_ncolumns.restype = ctypes.c_int
    lib.fofkit_halo_column_name.argtypes = [P(_HaloOptions), ctypes.c_int]
    lib.fofkit_halo_column_name.restype = ctypes.c_char_p
    lib.fofkit_version.argtypes = []
    lib.fofkit_version.restype = ctypes.c_char_p
    lib.fofkit_has_gpu_backend.argtypes = []
    lib.fofkit_has_gpu_backend.restype = ctypes.c_int


def version():
    """libfofkit's version string."""
    return library().fofkit_version().decode()


class _Array:
    """An argument array as the library takes it: its address, rows, and where it lives; the object
    is kept alive by the caller's reference for the call."""

    def __init__(self, name, a, cols, typestr, required=True):
        self.name, self.ptr, self.rows, self.gpu, self.obj = name, None, None, False, a
        if a is None:
            if required:
                raise ValueError("%s: an array is needed, not None" % name)
            return
        want = (-1,) if cols == 1 else (-1, cols)
        shape_text = "(n,)" if cols == 1 else "(n, %d)" % cols
        if not isinstance(a, np.ndarray) and hasattr(a, "__cuda_array_interface__"):
            cai = a.__cuda_array_interface__
            shape, ts, strides = tuple(cai["shape"]), cai["typestr"], cai.get("strides")
            if ts != typestr:
                raise TypeError("%s: a GPU array of %s; fofkit needs %s (%s): convert it on the GPU first"
                                % (name, ts, np.dtype(typestr).name, typestr))
            if len(shape) != len(want) or (cols != 1 and shape[1] != cols):
                raise ValueError("%s: a GPU array of shape %s; fofkit needs %s" % (name, shape, shape_text))
            itemsize = np.dtype(typestr).itemsize
            if strides is not None and tuple(strides) != tuple(
                    itemsize * int(np.prod(shape[k + 1:])) for k in range(len(shape))):
                raise ValueError("%s: a GPU array that is not C-contiguous; fofkit needs rows after rows "
                                 "(make a contiguous copy)" % name)
            self.ptr, self.rows, self.gpu = cai["data"][0], shape[0], True
            return
        if not isinstance(a, np.ndarray):
            raise TypeError("%s: a numpy array (or a GPU array with __cuda_array_interface__) is needed, not %s"
                            % (name, type(a).__name__))
        if a.dtype != np.dtype(typestr):
            raise TypeError("%s: dtype %s; fofkit needs %s (%s): pass %s.astype(np.%s)" % (
                name, a.dtype, np.dtype(typestr).name, typestr, name, np.dtype(typestr).name))
        if a.ndim != len(want) or (cols != 1 and a.shape[1] != cols):
            raise ValueError("%s: shape %s; fofkit needs %s" % (name, a.shape, shape_text))
        if not a.flags.c_contiguous:
            raise ValueError("%s: not C-contiguous; fofkit uses arrays in place: pass np.ascontiguousarray(%s)"
                             % (name, name))
        self.ptr, self.rows = (a.ctypes.data if a.size else None), a.shape[0]


def _particles(pos, vel, mass, ids, box, periodic, origin):
    arrays = [_Array("pos", pos, 3, "<f4"), _Array("vel", vel, 3, "<f4", False),
              _Array("mass", mass, 1, "<f4", False), _Array("ids", ids, 1, "<u8", False)]
    n = arrays[0].rows
    for a in arrays[1:]:
        if a.rows is not None and a.rows != n:
            raise ValueError("%s: %d rows for the %d particles of pos" % (a.name, a.rows, n))
    p = _Particles()
    library().fofkit_particles_init(ctypes.byref(p))
    p.n = n
    p.pos, p.vel, p.mass, p.ids = (a.ptr for a in arrays)
    if periodic is None:
        periodic = box is not None
    if periodic and box is None:
        raise ValueError("periodic=True needs the box's side (box=)")
    p.periodic = 1 if periodic else 0
    p.box = float(box) if box is not None else 0.0
    p.origin = float(origin)
    return p, arrays


def _levels(value, name):
    v = [float(x) for x in (value if np.ndim(value) else [value])]
    if not 1 <= len(v) <= LEVELS_MAX:
        raise ValueError("%s: 1 to %d levels, not %d" % (name, LEVELS_MAX, len(v)))
    return v


def _device(device):
    if device not in _DEVICES:
        raise ValueError("device: 'auto', 'cpu' or 'gpu', not %r" % (device,))
    return _DEVICES[device]


def _check(status, err):
    if status:
        raise FofkitError(status, err.message.decode(errors="replace"))


def fof(pos, b=0.2, box=None, l=None, vel=None, psi=None, psi_relative=False, periodic=None, origin=0.0, minsize=8,
        device="auto", threads=0, sinks=False, out=None):
    """Friends-of-friends groups of the particles at pos (float32, (n, 3), C-contiguous: numpy, used in place,
    or a GPU array with __cuda_array_interface__, linked on its GPU) as groups(1) numbers them: group[i] in
    1..ngroups by decreasing size (ties: lowest index first), 0 for particles in groups of fewer than minsize.

    b: linking length as a fraction of the mean spacing box / n^(1/3) (or l: absolute); a list of
    decreasing values gives levels, each linked inside the groups of the one before (the result is then
    (levels, n)). box: the box's side; periodic (default: when a box is given) with positions in
    [origin, origin + box). vel and psi (a list for levels) link in 6D, psi_relative as foflink --psi-rel.
    device: 'auto', 'cpu' or 'gpu'; threads: CPU threads (0: all). sinks=True returns, instead of group
    numbers, the lowest index in each particle's group. Returns a numpy uint32 array (host memory), or out:
    a uint32 array of the result's shape to write into, numpy or, for the group numbers, a GPU array
    (__cuda_array_interface__) on the GPU that links, where the numbers are then written without a trip
    through the host.
    Raises TypeError or ValueError for an array of the wrong dtype or shape, FofkitError for what the
    library refuses (NaN positions, positions outside the box, a box too small for l, no GPU)."""
    lib = library()
    p, keep = _particles(pos, vel, None, None, box, periodic, origin)
    o = _FofOptions()
    lib.fofkit_fof_options_init(ctypes.byref(o))
    if l is not None:
        lengths = _levels(l, "l")
        for k, v in enumerate(lengths):
            o.l[k] = v
    else:
        lengths = _levels(b, "b")
        for k, v in enumerate(lengths):
            o.b[k] = v
    o.nlevels = len(lengths)
    if psi is not None:
        if vel is None:
            raise ValueError("psi (6D linking) needs vel")
        for k, v in enumerate(_levels(psi, "psi")):
            o.psi[k] = v
        o.psi_relative = 1 if psi_relative else 0
    o.device = _device(device)
    o.nthreads = int(threads)
    o.minsize = int(minsize)
    r = _FofResult()
    lib.fofkit_fof_result_init(ctypes.byref(r))
    single = o.nlevels == 1 and np.ndim(l if l is not None else b) == 0
    if out is None:
        res = np.empty((o.nlevels, p.n), dtype=np.uint32)
        ptrs = [res[k].ctypes.data for k in range(o.nlevels)]
    else:
        a = _Array("out", out, 1 if single else p.n, "<u4")
        if a.rows != (p.n if single else o.nlevels):
            raise ValueError("out: %d rows; the result has %s" % (a.rows, "%d particles" % p.n if single else
                                                                    "%d levels of %d particles" % (o.nlevels, p.n)))
        res = out
        ptrs = [a.ptr + 4 * k * p.n if a.ptr else None for k in range(o.nlevels)]
    for k in range(o.nlevels):
        if sinks:
            r.sink[k] = ptrs[k] if p.n else None
        else:
            r.group[k] = ptrs[k] if p.n else None
    err = _Error()
    status = lib.fofkit_fof(ctypes.byref(p), ctypes.byref(o), ctypes.byref(r), ctypes.byref(err))
    lib.fofkit_fof_result_free(ctypes.byref(r))
    del keep
    _check(status, err)
    if out is not None:
        return out
    return res[0] if single else res


def halo_columns(centre="mbp", so=False, unbind=False):
    """The names of halostats' columns that halos() returns for these options."""
    lib = library()
    o = _HaloOptions()
    lib.fofkit_halo_options_init(ctypes.byref(o))
    o.centre, o.so, o.unbind = _CENTRES[centre], int(bool(so)), int(bool(unbind))
    return [lib.fofkit_halo_column_name(ctypes.byref(o), k).decode()
            for k in range(lib.fofkit_halo_ncolumns(ctypes.byref(o)))]


def halos(pos, vel, group, mass=None, ids=None, box=None, periodic=None, origin=0.0, ngroups=None, group_up=None,
          level=0, centre="mbp", G=1.0, softening=None, theta=None, exact_max=None, so=False, omega_m=None,
          omega_l=None, scale_factor=None, rho_crit=None, so_min=None, unbind=False, bound_min=None,
          device="auto", threads=0, return_bound=False, comoving=False, vel_scale=None, hubble_flow=None):
    """halostats' catalogue of groups 1..ngroups (default group.max()) of the particles: group (uint32, (n,),
    0 for none: what fof() returns), pos and vel (float32, (n, 3)), mass (float32, (n,), default 1), ids
    (uint64, default the index: mbp_id names particles by them). A structured array, one field per
    column, named as halostats names them: int64 for the ids and counts (level, host, id, n, mbp_id, n_gas,
    n_dark, n_star, n_contam, n_bound; -1 for none), float64 for the rest; Stream.catalogue() reads the same,
    with the same types, from halostats --format=stream. level fills the level column, group_up (the groups
    of the level above) the host column. centre 'mbp' or 'com', G, softening (default 0.05 box / n^(1/3)),
    theta, exact_max; so with omega_m (and omega_l, scale_factor, rho_crit, so_min); unbind (and bound_min);
    device, threads: as halostats(1)'s options. With return_bound, also the bound members (bool, (n,)). comoving (with
    scale_factor, vel_scale: VEL * vel_scale is the peculiar velocity, hubble_flow: H(a) a per comoving
    length): physical properties of a comoving run as halostats(1) gives them for a comoving stream."""
    lib = library()
    p, keep = _particles(pos, vel, mass, ids, box, periodic, origin)
    g = _Array("group", group, 1, "<u4")
    up = _Array("group_up", group_up, 1, "<u4", False)
    for a in (g, up):
        if a.rows is not None and a.rows != p.n:
            raise ValueError("%s: %d rows for the %d particles of pos" % (a.name, a.rows, p.n))
    if ngroups is None:
        if g.gpu:
            raise ValueError("ngroups is needed with a GPU group array")
        ngroups = int(group.max()) if p.n else 0
    o = _HaloOptions()
    lib.fofkit_halo_options_init(ctypes.byref(o))
    if centre not in _CENTRES:
        raise ValueError("centre: 'mbp' or 'com', not %r" % (centre,))
    o.centre, o.G = _CENTRES[centre], float(G)
    o.so, o.unbind, o.comoving = int(bool(so)), int(bool(unbind)), int(bool(comoving))
    given = (("softening", float, softening), ("theta", float, theta), ("exact_max", int, exact_max),
             ("omega_m", float, omega_m), ("omega_l", float, omega_l), ("scale_factor", float, scale_factor),
             ("rho_crit", float, rho_crit), ("so_min", int, so_min), ("bound_min", int, bound_min),
             ("vel_scale", float, vel_scale), ("hubble_flow", float, hubble_flow))
    for name, kind, value in given:  # the library's defaults where None
        if value is not None:
            setattr(o, name, kind(value))
    o.device, o.nthreads = _device(device), int(threads)
    names = [lib.fofkit_halo_column_name(ctypes.byref(o), k).decode()
             for k in range(lib.fofkit_halo_ncolumns(ctypes.byref(o)))]
    table = np.zeros((int(ngroups), len(names)), dtype="<f8")
    bound = np.zeros(p.n, dtype=np.uint8) if return_bound else None
    err = _Error()
    status = lib.fofkit_halos(ctypes.byref(p), g.ptr, int(ngroups), up.ptr, ctypes.byref(o),
                              table.ctypes.data if table.size else None,
                              bound.ctypes.data if bound is not None and p.n else None, ctypes.byref(err))
    del keep
    _check(status, err)
    # ids and counts as int64 (exact: below 2^53), the rest float64, as Stream.catalogue() types them
    cat = np.empty(int(ngroups), np.dtype([(name, "<i8" if name in INTEGER_COLUMNS else "<f8") for name in names]))
    for j, name in enumerate(names):
        cat[name] = table[:, j]
    if "level" in cat.dtype.names:
        cat["level"] = level
    return (cat, bound.astype(bool)) if return_bound else cat
