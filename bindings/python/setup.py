"""Builds guardjit._native against the guardjit that `pkg-config guardjit` finds.

Set PKG_CONFIG_PATH to PREFIX/lib/pkgconfig of an installed (or built)
library. The extension is plain C over guardjit.h; it links libguardjit.so
with an rpath to its directory, so no LD_LIBRARY_PATH is needed to import it.
"""
import shlex
import subprocess

from setuptools import Extension, setup


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "guardjit"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        raise SystemExit(
            "guardjit: `pkg-config guardjit` failed; set PKG_CONFIG_PATH to "
            "the installed library's lib/pkgconfig (" + detail.strip() + ")")
    return shlex.split(out)


cflags = pkg_config("--cflags")
libs = pkg_config("--libs")
libdir = pkg_config("--variable=libdir")[0]

setup(ext_modules=[
    Extension(
        "guardjit._native",
        sources=["src/guardjit/_native.c", "src/guardjit/_dlpack.c",
                 "src/guardjit/_handles.c"],
        depends=["src/guardjit/_native.h"],
        include_dirs=[f[2:] for f in cflags if f.startswith("-I")],
        extra_compile_args=[f for f in cflags if not f.startswith("-I")]
        + ["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra",
           "-Wno-unused-parameter",
           "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
        library_dirs=[f[2:] for f in libs if f.startswith("-L")],
        libraries=[f[2:] for f in libs if f.startswith("-l")],
        runtime_library_dirs=[libdir],
    )
])
