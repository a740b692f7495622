"""buildenv.py - where the tests find the fofkit programs and libfofkit: the PATH, $FOFKIT_BUILD, or the
build tree of the checkout these tests sit in (../../build), so that `python3 -m unittest` in python/
runs them without setting anything; need() skips naming what is missing.

Imported before fofkit by every test module: it puts the build's bin/ and tests/ (helper programs) on
the PATH and, unless $FOFKIT_LIB is set, names the build's libfofkit.so there (fofkit.library's first
choice), so that the tests run the programs and the library of one build.
"""

import os
import shutil
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# ../shared/data beside the repository (FOFKIT_DATA overrides it), as the bats tests find it
DATA = os.environ.get("FOFKIT_DATA") or os.path.join(REPO, "..", "shared", "data")


def _build():
    """The build directory: $FOFKIT_BUILD, else the checkout's build/ (make's default B), else None."""
    env = os.environ.get("FOFKIT_BUILD")
    if env:
        return os.path.abspath(env)
    if os.path.isfile(os.path.join(REPO, "Makefile")) and os.path.isfile(os.path.join(REPO, "include", "fofkit.h")):
        return os.path.join(REPO, "build")
    return None


BUILD = _build()
if BUILD:
    _dirs = [os.path.join(BUILD, d) for d in ("bin", "tests") if os.path.isdir(os.path.join(BUILD, d))]
    if _dirs:
        os.environ["PATH"] = os.pathsep.join(_dirs + [os.environ.get("PATH", "")])
    if not os.environ.get("FOFKIT_LIB") and os.path.exists(os.path.join(BUILD, "libfofkit.so")):
        os.environ["FOFKIT_LIB"] = os.path.join(BUILD, "libfofkit.so")


def missing(programs):
    """The programs of the list found neither on the PATH nor in the build's bin/ (groups: coreutils' is not
    fofkit's stage, which is also fofgroups)."""
    return [p for p in programs if not shutil.which("fofgroups" if p == "groups" else p)]


def why_missing(programs):
    """None when every program is found, else a message naming those missing and where they were looked for."""
    gone = missing(programs)
    if not gone:
        return None
    where = "on the PATH"
    if BUILD:
        where += " nor in %s" % os.path.join(BUILD, "bin")
    return "no %s %s (build them with make, or set FOFKIT_BUILD to a build directory)" % (", ".join(gone), where)


def need(programs):
    """A decorator: skip unless every program is found, naming those that are not."""
    why = why_missing(programs)
    return unittest.skipIf(why is not None, why or "")
