"""physcheck.py - halostats' physical halo properties at z > 0 against an independent numpy computation.

Usage (tests/halophys.bats runs it):
    python3 physcheck.py SNAPSHOT.hdf5 CAT.txt GID.txt BGID.txt

SNAPSHOT is a Gadget-4 snapshot of dark matter and gas (gas first in the stream's source order); CAT
halostats --unbind --so's text catalogue of `hdf52bin -t dark SNAPSHOT | kdbuild | foflink | groups`;
GID and BGID `fofdump -c GID` and `fofdump -c BGID` of that stream and of halostats --format=stream
(one group id a line, the snapshot's order: gas rows, then dark). Everything here is computed from
the snapshot alone, in physical units (Gadget-4's SUBFIND: subfind_unbind.cc, subfind_properties.cc):
    r = a dx (minimum image), v = sqrt(a) VEL + H(a) r, phi_i = -G sum_j m_j / sqrt(r_ij^2 + eps_phys^2),
    H(a) = H0 sqrt(Om a^-3 + (1 - Om - OL) a^-2 + OL), H0 = 0.1 km/s per kpc/h,
    G = 6.6743e-8 cm^3/g/s^2 in kpc/h, 1e10 Msun/h (1.989e43 g / h), km/s: halostats' own G,
    eps_phys = a eps, eps = 0.05 box / n^(1/3) comoving (halostats' default).
Checks, each with its tolerance:
  - unbinding: an O(n^2) loop over each group's members, the rule halostats(1) states (UNBINDING:
    energies in the frame of the remaining set's centre of mass, the most unbound e >= e_max / 2 first
    when the others would drag that frame, fewer than 10 bound: none). Every member it removes has
    e >= 0 at its removal; its bound set is BGID's, particle for particle; every member BGID keeps has
    e < 0 in the bound set's own frame and potential;
  - mbp_id is the member of least exact potential; vmax = max over members of sqrt(G M(<=r) / r),
    r physical about it: relative 2e-6 (the text's 9 digits);
  - R200c (comoving) and M200c: the first sphere from the 10th particle out whose mean density is
    below 200 rho_crit(z) = 200 * 3 H(z)^2 / (8 pi G), physical, interpolated in log rho against
    log r as halostats(1) says, over every particle of the stream: relative 1e-5.
Prints a summary and exits 0, or prints what differs and exits 1.
"""

import sys

import h5py
import numpy as np

G_CGS = 6.6743e-8
KPC_CM = 3.085678e21
MSUN_G = 1.989e33


def catalogue(path):
    names = None
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                names = line[1:].split()
                continue
            rows.append([float(x) for x in line.split()])
    cat = np.array(rows)
    return {n: cat[:, k] for k, n in enumerate(names)}


def potentials(r, m, eps):
    d = r[:, None, :] - r[None, :, :]
    inv = 1 / np.sqrt((d * d).sum(axis=2) + eps * eps)
    np.fill_diagonal(inv, 0)
    return -(inv * m[None, :]).sum(axis=1)


def energies(r, v, m, G, eps):
    """Specific energies of every member in the frame of the set's centre of mass (the Hubble flow is
    in v already, about any point: the mean takes the offset)."""
    M = m.sum()
    vS = (m[:, None] * v).sum(axis=0) / M
    u = v - vS
    return 0.5 * (u * u).sum(axis=1) + G * potentials(r, m, eps), u, M


def unbind(r, v, m, G, eps, minbound=10, drag=0.1, halvings=64):
    S = np.arange(len(m))
    removed = []  # (member, energy at its removal)
    passes = 0
    while len(S) >= minbound:
        passes += 1
        e, u, W = energies(r[S], v[S], m[S], G, eps)
        unb = e >= 0
        if not unb.any():
            break
        s2 = (m[S] * (u * u).sum(axis=1)).sum()
        mu = m[S][unb].sum()
        pu = (m[S][unb][:, None] * u[unb]).sum(axis=0)
        dv2 = (pu * pu).sum() / (W - mu) ** 2 if W > mu else np.inf
        emin = e[unb].max() / 2 if dv2 > drag * drag * s2 / W and passes <= halvings else 0
        leave = e >= emin
        removed += list(zip(S[leave], e[leave]))
        S = S[~leave]
    return (S if len(S) >= minbound else S[:0]), removed


def main(snapshot, catpath, gidpath, bgidpath):
    f = h5py.File(snapshot, "r")
    hd = f["Header"].attrs
    a = float(hd["Time"])
    box = float(hd["BoxSize"])
    par = f["Parameters"].attrs
    om, ol = float(par["Omega0"]), float(par["OmegaLambda"])
    ngas = int(hd["NumPart_ThisFile"][0])
    pos = f["PartType1/Coordinates"][:].astype(np.float64)
    vel = f["PartType1/Velocities"][:].astype(np.float64)
    mass = (f["PartType1/Masses"][:] if "Masses" in f["PartType1"] else np.full(len(pos), hd["MassTable"][1])).astype(
        np.float64
    )
    n = len(pos)
    G = G_CGS * 1e10 * MSUN_G / (KPC_CM * 1e10)  # kpc/h (km/s)^2 per 1e10 Msun/h
    H = 0.1 * np.sqrt(om / a**3 + (1 - om - ol) / a**2 + ol)  # km/s per physical kpc/h
    eps = 0.05 * box / round(n ** (1 / 3)) * a
    gid = np.loadtxt(gidpath, dtype=np.int64)[ngas:]
    bgid = np.loadtxt(bgidpath, dtype=np.int64)[ngas:]
    cat = catalogue(catpath)
    bad = []
    nrem = nkept = 0
    worst_v = worst_so = 0.0
    for row in range(len(cat["id"])):
        g = int(cat["id"][row])
        idx = np.nonzero(gid == g)[0]
        ref = idx[0]
        dx = pos[idx] - pos[ref]
        dx -= box * np.round(dx / box)
        r = a * dx
        v = np.sqrt(a) * vel[idx] + H * r
        m = mass[idx]
        # the centre and vmax
        phi = potentials(r, m, eps)
        mbp = idx[np.argmin(phi)]
        if int(cat["mbp_id"][row]) != ngas + mbp:
            bad.append(f"group {g}: mbp_id {int(cat['mbp_id'][row])}, numpy's least potential is {ngas + mbp}")
        c = pos[mbp]
        d = pos[idx] - c
        d -= box * np.round(d / box)
        rr = a * np.sqrt((d * d).sum(axis=1))
        o = np.argsort(rr, kind="stable")
        rs, cm = rr[o], np.cumsum(m[o])
        last = np.r_[rs[1:] != rs[:-1], True]  # M(<=r) holds every member at r
        ok = last & (rs > 0)
        vmax = np.sqrt(G * (cm[ok] / rs[ok]).max())
        rel = abs(vmax - cat["vmax"][row]) / vmax
        worst_v = max(worst_v, rel)
        if rel > 2e-6:
            bad.append(f"group {g}: vmax {cat['vmax'][row]!r}, numpy {vmax!r}")
        # the unbinding
        S, removed = unbind(r, v, m, G, eps)
        for k, e in removed:
            nrem += 1
            if not e >= 0:
                bad.append(f"group {g}: member {ngas + idx[k]} removed at energy {e!r}")
        mine = set(idx[S])
        theirs = set(np.nonzero(bgid == g)[0])
        if mine != theirs:
            bad.append(f"group {g}: BGID keeps {len(theirs)}, numpy's loop {len(mine)}: differ in "
                       f"{sorted(ngas + k for k in mine ^ theirs)[:10]}")
        if int(cat["n_bound"][row]) != len(theirs):
            bad.append(f"group {g}: n_bound {int(cat['n_bound'][row])}, BGID holds {len(theirs)}")
        if theirs:
            keep = np.array(sorted(theirs))
            sel = np.searchsorted(idx, keep)
            e, _, _ = energies(r[sel], v[sel], m[sel], G, eps)
            nkept += len(keep)
            if not (e < 0).all():
                bad.append(f"group {g}: {(e >= 0).sum()} kept members have energy >= 0 in the bound set")
        # R200c and M200c over every particle of the stream
        D = pos - c
        D -= box * np.round(D / box)
        Rall = np.sqrt((D * D).sum(axis=1))
        o = np.argsort(Rall, kind="stable")
        Rs, Cm = Rall[o], np.cumsum(mass[o])
        Ez2 = om / a**3 + (1 - om - ol) / a**2 + ol
        rho_t = 200 * 3 * (0.1**2 * Ez2) / (8 * np.pi * G) * a**3  # comoving, 1e10 Msun/h per (kpc/h)^3
        last = np.r_[Rs[1:] != Rs[:-1], True]
        Rs, Cm = Rs[last][9:], Cm[last][9:]  # the profile from the sphere of 10 particles out
        Rs, Cm = Rs[Rs > 0], Cm[Rs > 0]
        rho = Cm / (4 / 3 * np.pi * Rs**3)
        k = np.argmax(rho < rho_t)
        if k == 0:  # the first sphere is not dense enough (or none is below): not reached, nan
            if not (np.isnan(cat["r200c"][row]) and np.isnan(cat["m200c"][row])):
                bad.append(f"group {g}: r200c {cat['r200c'][row]!r}, numpy reaches no crossing")
            continue
        lR = np.log(Rs[k - 1]) + (np.log(rho_t) - np.log(rho[k - 1])) * (np.log(Rs[k]) - np.log(Rs[k - 1])) / (
            np.log(rho[k]) - np.log(rho[k - 1])
        )
        R = np.exp(lR)
        M = 4 / 3 * np.pi * R**3 * rho_t * 1e10
        for name, want in (("r200c", R), ("m200c", M)):
            rel = abs(cat[name][row] - want) / want
            worst_so = max(worst_so, rel)
            if rel > 1e-5:
                bad.append(f"group {g}: {name} {cat[name][row]!r}, numpy {want!r}")
    if bad:
        print("\n".join(bad[:40]))
        return 1
    print(f"a {a:.6g}: {len(cat['id'])} groups, {nkept} bound members with e < 0, {nrem} removed at e >= 0; "
          f"vmax to {worst_v:.2g}, R200c and M200c to {worst_so:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
