"""halocat_z.py - a z > 0 HDF5 catalogue of halostats through yt and pynbody: comoving and physical values
against halostats' text catalogue, with the factors of a and h that the datasets' a_scaling and h_scaling
attributes name.

Usage (tests/halocat_z.bats runs it):
    python3 halocat_z.py yt CAT TEXT            yt.load(CAT, unit_base=the catalogue's Parameters)
    python3 halocat_z.py pynbody CAT TEXT SNAP  pynbody.load(SNAP).halos(filename=CAT); SNAP is the
                                                group-ordered snapshot of halostats --snapshot
CAT is halostats --so --unbind --format=hdf5 of a comoving stream (named fof_subhalo_tab_NNN.0.hdf5, as
yt wants it), TEXT halostats --so --unbind of the same stream.

The expected values come from the text alone, in physical cgs units:
    value_text * (the text's unit in cgs) * a^ta * h^th
where (ta, th) is the text column's frame, which its header states (lengths comoving kpc/h: a^1 h^-1;
masses Msun/h: h^-1; velocities physical km/s: 1). Each dataset's raw number must then be that value
divided by to_cgs a^a_scaling h^h_scaling (its attributes; read with h5py), and each reader's value
converted to physical cgs (yt: .to('cm'); pynbody: .in_units('cm')) and to the file's frame (yt:
'cmcm/h'; pynbody: 'cm a h**-1') must equal it. Tolerance: relative 1e-8 (the text has 9 significant
digits); absolute 1e-8 of the box for positions.

Neither reader reads a_scaling or h_scaling: yt's gadget_fof frontend takes every length as comoving
code_length and every velocity as code_velocity (physical km/s when unit_base names
UnitVelocity_in_cm_per_s), pynbody's Gadget4SubfindHDFCatalogue guesses a dataset's dimension from its
name and gives it the snapshot's unit (velocities km/s a^1/2, as a snapshot's Velocities). Where that
differs from the attributes, the reader's number is still checked (it is the file's), and the dataset
must be one of the documented exceptions below: a new one means the file changed a convention.
Prints what differs and exits 1, or prints a summary and exits 0.
"""

import math
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")  # the readers warn about attributes a Gadget-4 catalogue does not hold

RTOL = 1e-8
# The datasets whose physical values a reader gets wrong because it ignores a_scaling (what it assumes
# instead, as (a, h) exponents). Gadget-4's SUBFIND computes the same quantities physical
# (src/subfind/subfind_properties.cc: velocities times fac_vel_to_phys, the rotation curve's radii
# times fac_comov_to_phys) and its src/fof/fof_io.cc writes no unit attributes, so the readers guess
# the same way for Gadget-4's own catalogues: these are the readers' limits, not the file's.
KNOWN = {
    "yt": {"SubhaloVmaxRad": (1, -1)},
    "pynbody": {"GroupVel": (0.5, 0), "SubhaloVmax": (0.5, 0), "SubhaloVmaxRad": (1, -1)},
}
# (dataset, text column(s), dimension, the text column's frame (a, h) exponents)
QUANTITIES = [
    ("Group/GroupPos", ("xc", "yc", "zc"), "length", (1, -1)),
    ("Group/GroupCM", ("x", "y", "z"), "length", (1, -1)),
    ("Group/Group_R_Crit200", ("r200c",), "length", (1, -1)),
    ("Group/Group_R_Mean200", ("r200m",), "length", (1, -1)),
    ("Group/GroupMass", ("mass",), "mass", (0, -1)),
    ("Group/Group_M_Crit200", ("m200c",), "mass", (0, -1)),
    ("Group/GroupVel", ("vx", "vy", "vz"), "velocity", (0, 0)),
    ("Subhalo/SubhaloPos", ("xc", "yc", "zc"), "length", (1, -1)),
    ("Subhalo/SubhaloMass", ("mass_bound",), "mass", (0, -1)),
    ("Subhalo/SubhaloVmax", ("vmax",), "velocity", (0, 0)),
    ("Subhalo/SubhaloVmaxRad", ("r_vmax",), "length", (1, -1)),
]
# the text header's frame for each column used: it must say so
FRAMES = {"comoving": ("x", "y", "z", "xc", "yc", "zc", "r200c", "r200m", "r_vmax"),
          "physical": ("mass", "m200c", "mass_bound", "vx", "vy", "vz", "vmax")}
CGS = {"length": "cm", "mass": "g", "velocity": "cm/s"}
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def close(got, want, what, atol=0.0):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    ok = got.shape == want.shape and np.allclose(got, want, rtol=RTOL, atol=atol)
    check(ok, "%s: %s, not %s" % (what, got.ravel()[:4], want.ravel()[:4]))
    return ok


def text_catalogue(path):
    """The level 0 rows of halostats' text, by column; the units line; the column frames."""
    lines = open(path).read().splitlines()
    head = [ln for ln in lines if ln.startswith("#")]
    names = head[-1][1:].split()
    rows = np.array([ln.split() for ln in lines if not ln.startswith("#")], dtype=np.float64)
    t = {n: rows[:, k] for k, n in enumerate(names)}
    t = {n: v[t["level"] == 0] for n, v in t.items()}
    # "# units: length kpc/h, mass Msun/h, velocity km/s; one stream unit is 1, 1e+10, 1 of them"
    units = [ln for ln in head if ln.startswith("# units: ")]
    check(len(units) == 1, "one '# units:' line in the text")
    per = [float(x) for x in units[0].split("one stream unit is ")[1].split(" of them")[0].split(",")]
    frame = {}
    for ln in head:
        w = ln[1:].split()
        if len(w) >= 4 and w[0].isdigit() and w[1] in names and w[3].rstrip(":") in FRAMES:
            frame[w[1]] = w[3].rstrip(":")
    return t, dict(zip(("length", "mass", "velocity"), per)), frame


def expected(cat_path, text_path):
    """{dataset: (raw file values, physical cgs values, attributes)} from the text and the attributes."""
    import h5py

    t, per, frame = text_catalogue(text_path)
    for fr, cols in FRAMES.items():
        for c in cols:
            check(frame.get(c) == fr, "the text says column %s is %s, not %s" % (c, frame.get(c), fr))
    f = h5py.File(cat_path, "r")
    hdr, par = f["Header"].attrs, f["Parameters"].attrs
    a, h = float(hdr["Time"]), float(hdr["HubbleParam"])
    check(hdr["Redshift"] == 1 / a - 1, "Redshift %r is 1/Time - 1" % hdr["Redshift"])
    check(par["HubbleParam"] == h and 0 < a < 1, "HubbleParam and Time")
    unit = {"length": float(par["UnitLength_in_cm"]), "mass": float(par["UnitMass_in_g"]),
            "velocity": float(par["UnitVelocity_in_cm_per_s"])}
    # a subhalo is its group's bound part: its text row is its group's
    grp = f["Subhalo/SubhaloGroupNr"][()]
    check(np.array_equal(f["Subhalo/SubhaloLen"][()], t["n_bound"][grp]), "SubhaloLen is its group's n_bound")
    out = {}
    for name, cols, dim, (ta, th) in QUANTITIES:
        d = f[name]
        txt = np.stack([np.nan_to_num(t[c], nan=0.0) for c in cols], 1)  # nan (not reached): 0, as Gadget's
        if name.startswith("Subhalo/"):
            txt = txt[grp]
        if len(cols) == 1:
            txt = txt[:, 0]
        phys = txt * unit[dim] / per[dim] * a ** ta * h ** th
        sa, sh, cgs = float(d.attrs["a_scaling"]), float(d.attrs["h_scaling"]), float(d.attrs["to_cgs"])
        check(cgs == unit[dim], "%s: to_cgs %r is the Parameters' unit" % (name, cgs))
        raw = phys / (cgs * a ** sa * h ** sh)
        atol = 1e-8 * float(hdr["BoxSize"]) if dim == "length" and len(cols) == 3 else 0.0
        close(d[()], raw, "%s (h5py) against the text with a^%g h^%g" % (name, sa, sh), atol=atol)
        out[name] = (raw, phys, (sa, sh), dim, atol, cgs)
    return out, a, h, unit


def assumed(factor, cgs, a, h):
    """The (a, h) exponents a reader's factor from its raw number to cgs stands for, or None."""
    for ea in (0, 0.5, 1, -1, -0.5):
        for eh in (0, -1, 1):
            if math.isclose(factor, cgs * a ** ea * h ** eh, rel_tol=1e-9):
                return (ea, eh)
    return None


def compare(reader, values, exp, a, h):
    """values: {dataset: (its number, in physical cgs or None (no unit), in the file's frame in cgs)}."""
    wrong, agree = {}, 0
    for name, (raw, phys, (sa, sh), dim, atol, cgs) in exp.items():
        got_raw, got_phys, got_frame = values[name]
        close(got_raw, raw, "%s %s: the number" % (reader, name), atol=atol)
        if got_phys is None:
            print("%s %s: no unit" % (reader, name))
            continue
        scale = a ** sa * h ** sh
        if np.allclose(got_phys, phys, rtol=RTOL, atol=atol * cgs * scale):
            agree += close(got_frame, phys / scale, "%s %s in the file's frame (a^%g h^%g)" % (reader, name, sa, sh),
                           atol=atol * cgs)
            continue
        k = np.flatnonzero(np.ravel(got_raw) != 0)[0]
        wrong[name.split("/")[1]] = assumed(float(np.ravel(got_phys)[k] / np.ravel(got_raw)[k]), cgs, a, h)
        print("%s %s: the reader takes a^%s h^%s, the file says a^%g h^%g" %
              ((reader, name) + (wrong[name.split("/")[1]] or ("?", "?")) + (sa, sh)))
    check(wrong == KNOWN[reader], "%s: datasets read against their attributes %s, not the documented %s" %
          (reader, wrong, KNOWN[reader]))
    return agree


def check_yt(cat_path, text_path):
    import yt

    yt.set_log_level(50)
    exp, a, h, unit = expected(cat_path, text_path)
    # yt reads no units from a catalogue: they are handed to it (the file's Parameters)
    ub = {"UnitLength_in_cm": unit["length"], "UnitMass_in_g": unit["mass"],
          "UnitVelocity_in_cm_per_s": unit["velocity"]}
    ds = yt.load(cat_path, unit_base=ub)
    check(ds.current_redshift == 1 / a - 1 and ds.hubble_constant == h, "yt: redshift %r, h %r" %
          (ds.current_redshift, ds.hubble_constant))
    check(ds.omega_matter == 0.3 and ds.omega_lambda == 0.7, "yt cosmology")
    ad = ds.all_data()
    frame_units = {(1, -1): "cmcm/h", (0, -1): "%s/h", (0, 0): "%s"}
    values = {}
    for name, (raw, phys, (sa, sh), dim, atol, cgs) in exp.items():
        ptype, field = name.split("/")
        arr = [ad[ptype, "%s_%d" % (field, k)] for k in range(3)] if raw.ndim == 2 else [ad[ptype, field]]
        if arr[0].units.is_dimensionless:  # a field yt does not know
            values[name] = (np.stack([x.d for x in arr], 1) if raw.ndim == 2 else arr[0].d, None, None)
            continue
        fu = frame_units[(sa, sh)]
        fu = fu % CGS[dim] if "%s" in fu else fu
        values[name] = tuple(np.stack([x.to(u).d for x in arr], 1) if raw.ndim == 2 else arr[0].to(u).d
                             for u in ("code_" + dim, CGS[dim], fu))
    # comoving against physical: kpccm/h and kpc differ by a / h
    pos_c, pos_p = ad["Group", "GroupPos_0"].to("kpccm/h").d, ad["Group", "GroupPos_0"].to("kpc").d
    close(pos_p / pos_c, np.full_like(pos_c, a / h), "yt GroupPos: kpc over kpccm/h is a / h")
    agree = compare("yt", values, exp, a, h)
    if not failures:
        print("yt %s at z = %.4g (a = %.7g, h = %g): %d of %d datasets agree with the text, comoving and "
              "physical; %s as its number (yt takes every length as comoving)" %
              (yt.__version__, 1 / a - 1, a, h, agree, len(exp), ", ".join(sorted(KNOWN["yt"]))))


def check_pynbody(cat_path, text_path, snap_path):
    import pynbody

    exp, a, h, _ = expected(cat_path, text_path)
    sim = pynbody.load(snap_path)
    check(math.isclose(sim.properties["a"], a, rel_tol=1e-12) and sim.properties["h"] == h,
          "pynbody: a %r, h %r" % (sim.properties["a"], sim.properties["h"]))
    halos = sim.halos(filename=cat_path)
    props = halos.get_properties_all_halos()
    frame_units = {(1, -1): "cm a h**-1", (0, -1): "%s h**-1", (0, 0): "%s"}
    cgs_units = {"length": "cm", "mass": "g", "velocity": "cm s**-1"}
    values = {}
    for name, (raw, phys, (sa, sh), dim, atol, cgs) in exp.items():
        field = name.split("/")[1]
        v = props[field]
        num = np.asarray(v.view(np.ndarray), np.float64)
        if isinstance(v.units, pynbody.units.NoUnit):
            values[name] = (num, None, None)
            continue
        fu = frame_units[(sa, sh)]
        fu = fu % cgs_units[dim] if "%s" in fu else fu
        values[name] = (num, np.asarray(v.in_units(cgs_units[dim]), np.float64), np.asarray(v.in_units(fu), np.float64))
    pos = props["GroupPos"]
    close(np.asarray(pos.in_units("kpc"))[:, 0] / np.asarray(pos.in_units("kpc a h**-1"))[:, 0],
          np.full(len(pos), a / h), "pynbody GroupPos: kpc over kpc a h^-1 is a / h")
    agree = compare("pynbody", values, exp, a, h)
    if not failures:
        print("pynbody %s at z = %.4g (a = %.7g, h = %g): %d halos; %d of %d datasets agree with the text, "
              "comoving and physical; %s as their numbers (pynbody gives them the snapshot's units)" %
              (pynbody.__version__, 1 / a - 1, a, h, len(halos), agree, len(exp), ", ".join(sorted(KNOWN["pynbody"]))))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "yt":
        check_yt(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "pynbody":
        check_pynbody(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
