"""The build hook behind pyproject.toml: a pure build, or with `DICEHALL_COMPILE=1` one
whose hot sans-I/O modules (server/compiled.py) are compiled to C by mypyc as well.

The metadata is all in pyproject.toml; this adds the extension modules only. A compiled
build keeps every `.py` too: anything not compiled runs as Python.
"""

from __future__ import annotations

import os
import runpy

from setuptools import setup


def extensions() -> list[object]:
    if os.environ.get("DICEHALL_COMPILE", "") != "1":
        return []
    from mypyc.build import mypycify  # (a build requirement only then: build_backend/)

    modules = runpy.run_path(os.path.join("server", "compiled.py"))["MODULES"]
    # (dicehall.server.x compiles from dicehall/server/x.py, through dicehall/'s links, so
    # that mypyc names it as it is imported; its shared library stays inside the package.)
    paths = [name.replace(".", "/") + ".py" for name in modules]
    return list(mypycify(paths, opt_level="3", group_name="dicehall.server.compiled"))


setup(ext_modules=extensions())
