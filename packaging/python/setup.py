"""Builds the extension's loadable library from the amalgamation.

The library is not a Python module: it is SQLite's, named dataset.so
(dataset.dylib on macOS, dataset.dll on Windows) so that SQLite derives
its entry point, sqlite3_dataset_init, from the name.  It calls no Python
API, so one wheel serves every Python 3 of a platform (py3-none-PLATFORM).
The sdist holds dataset.c and compiles it at install.
"""
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # building the sdist alone needs no wheel package
    bdist_wheel = None


def library_suffix():
    if sys.platform == "darwin":
        return ".dylib"
    if sys.platform == "win32":
        return ".dll"
    return ".so"


class BuildLibrary(build_ext):
    """build_ext for a plain shared library: no Python ABI in its name."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + library_suffix()

    def get_export_symbols(self, ext):
        # Used on Windows only: the entry point, not PyInit_dataset.
        return ["sqlite3_dataset_init"]


cmdclass = {"build_ext": BuildLibrary}

if bdist_wheel is not None:

    class BdistWheel(bdist_wheel):
        """Platform-specific, but for any Python 3."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel

setup(
    ext_modules=[
        Extension(
            "sqlite_dataset.dataset",
            sources=["dataset.c"],
            depends=["dataset.h"],
            libraries=[] if sys.platform == "win32" else ["m"],
        )
    ],
    cmdclass=cmdclass,
)
