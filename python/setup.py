"""setup.py - `pip install ./python`, `pip wheel ./python`, `python -m build --wheel python`: the package, and
libfofkit beside it, in a platform wheel (setuptools' build_meta, pyproject.toml).

At build time the package gets the library (fofkit(3)) it calls through ctypes, in this order:
  - $FOFKIT_LIB: that file, copied into the package;
  - $FOFKIT_BUILD: a fofkit build directory (make B=DIR) whose libfofkit.so is copied as it is;
  - inside the fofkit sources (../Makefile beside this folder): `make lib` there (into B=$FOFKIT_BUILD_DIR,
    default build; a C compiler and make, the CUDA backend too when nvcc is on the PATH), and the
    libfofkit.so it built, copied;
  - an installed libfofkit (pkg-config fofkit): its path, recorded in fofkit/_libpath.py.
Without any, the package installs without it: the stream reader works, fofkit.fof() says what is missing.

The library copied is libfofkit.so alone: it loads no MPI, HDF5, libpng or cairo (the Makefile links it
so), only libz, libgomp and the C library.

The wheel's tag is py3-none-PLATFORM (linux_x86_64 here): it holds a shared library of this platform, so
it is not "any", but no CPython extension module (ctypes loads the library, calling no Python C API), so
any Python 3 and any ABI load it: a cp3X-cp3X tag would refuse other Pythons for nothing. The platform is
the build machine's (setuptools' get_platform); a wheel for other Linux machines is repaired into a
manylinux one by auditwheel, which also copies in the libgomp it needs.
"""

import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools 70.1 and later have bdist_wheel; before, the wheel package
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # neither: no wheel can be built, pip install ./python still works
        bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.dirname(HERE)
LIBRARY = "libfofkit.so.0"  # the name in the package, which fofkit/library.py loads first


def find_library():
    """('copy', path) or ('record', path) or (None, why)."""
    env = os.environ.get("FOFKIT_LIB")
    if env:
        if not os.path.exists(env):
            raise SystemExit("FOFKIT_LIB=%s: no such file" % env)
        return "copy", env
    build = os.environ.get("FOFKIT_BUILD")
    if build:
        path = os.path.join(build, "libfofkit.so")
        if not os.path.exists(path):
            raise SystemExit("FOFKIT_BUILD=%s: no libfofkit.so there (make B=%s lib)" % (build, build))
        return "copy", path
    if os.path.exists(os.path.join(SOURCES, "Makefile")) and \
            os.path.exists(os.path.join(SOURCES, "include", "fofkit.h")):
        build = os.environ.get("FOFKIT_BUILD_DIR", "build")
        subprocess.run(["make", "-C", SOURCES, "B=" + build, "lib"], check=True)
        return "copy", os.path.join(SOURCES, build, "libfofkit.so")
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "fofkit"], check=True, capture_output=True,
                                text=True).stdout.strip()
        path = os.path.join(libdir, LIBRARY)
        if os.path.exists(path):
            return "record", path
    except (OSError, subprocess.CalledProcessError):
        pass
    return None, "no libfofkit: neither FOFKIT_LIB, FOFKIT_BUILD, the fofkit sources, nor pkg-config fofkit"


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        how, path = find_library()
        target = os.path.join(self.build_lib, "fofkit")
        for stale in (LIBRARY, "_libpath.py"):  # an earlier build's, left in build/lib
            if os.path.exists(os.path.join(target, stale)):
                os.remove(os.path.join(target, stale))
        if how == "copy":
            shutil.copyfile(os.path.realpath(path), os.path.join(target, LIBRARY))
        elif how == "record":
            with open(os.path.join(target, "_libpath.py"), "w") as f:
                f.write('"""_libpath.py - where pip install found libfofkit."""\nLIBRARY = %r\n' % path)
        else:
            print("fofkit: %s; installing the stream reader alone (fofkit.fof needs the library)" % path)


class PlatformDistribution(Distribution):
    """A distribution of this platform (libfofkit inside): its files go to platlib, its wheel is not pure."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithLibrary}

if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """py3-none-PLATFORM: a platform's shared library, loaded by ctypes from any Python 3 (the docstring
        at the top says why), in place of the cp3X-cp3X-PLATFORM of an extension module."""

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    cmdclass["bdist_wheel"] = PlatformWheel

setup(cmdclass=cmdclass, distclass=PlatformDistribution)
