"""setup.py - `pip install ./python`: the package, and libfofkit beside it.

At build time the package gets the library (fofkit(3)) it calls through ctypes, in this order:
  - $FOFKIT_LIB: that file, copied into the package;
  - inside the fofkit sources (../Makefile beside this folder): `make lib` there (a C compiler and
    make; the CUDA backend too when nvcc is on the PATH), and the libfofkit.so it built, copied;
  - an installed libfofkit (pkg-config fofkit): its path, recorded in fofkit/_libpath.py.
Without any, the package installs without it: the stream reader works, fofkit.fof() says what is missing.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.dirname(HERE)


def find_library():
    """('copy', path) or ('record', path) or (None, why)."""
    env = os.environ.get("FOFKIT_LIB")
    if env:
        if not os.path.exists(env):
            raise SystemExit("FOFKIT_LIB=%s: no such file" % env)
        return "copy", env
    if os.path.exists(os.path.join(SOURCES, "Makefile")) and os.path.exists(os.path.join(SOURCES, "include", "fofkit.h")):
        build = os.environ.get("FOFKIT_BUILD_DIR", "build")
        subprocess.run(["make", "-C", SOURCES, "B=" + build, "lib"], check=True)
        return "copy", os.path.join(SOURCES, build, "libfofkit.so")
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "fofkit"], check=True, capture_output=True,
                                text=True).stdout.strip()
        path = os.path.join(libdir, "libfofkit.so.0")
        if os.path.exists(path):
            return "record", path
    except (OSError, subprocess.CalledProcessError):
        pass
    return None, "no libfofkit: neither FOFKIT_LIB, nor the fofkit sources, nor pkg-config fofkit"


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        how, path = find_library()
        target = os.path.join(self.build_lib, "fofkit")
        if how == "copy":
            shutil.copyfile(os.path.realpath(path), os.path.join(target, "libfofkit.so.0"))
        elif how == "record":
            with open(os.path.join(target, "_libpath.py"), "w") as f:
                f.write('"""_libpath.py - where pip install found libfofkit."""\nLIBRARY = %r\n' % path)
        else:
            print("fofkit: %s; installing the stream reader alone (fofkit.fof needs the library)" % path)


setup(cmdclass={"build_py": BuildWithLibrary})
