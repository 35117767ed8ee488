"""Packaging hooks (the metadata is in pyproject.toml).

Installed outside the checkout (`pip install --no-build-isolation --no-index
python/` into a venv), the package cannot reach ../schema or ../build, so
the build copies into it what it reads from the checkout:

  torchlight/_data/program.fbs              schema/program.fbs
  torchlight/_data/registered_kernels.txt   the runtime build's kernel list
  torchlight/_native/_torchlight_runtime*.so  the pybind runtime module

from $TORCHLIGHT_BUILD_DIR (default ../build/release). The runtime module
and the kernel list are optional: without a build the package installs
for export only (torchlight.runtime then says the module is missing).
An editable install (`pip install -e python`) keeps reading the checkout.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def build_dir() -> Path:
    env = os.environ.get("TORCHLIGHT_BUILD_DIR")
    if env:
        path = Path(env)
        return path if path.is_absolute() else REPO / path
    return REPO / "build" / "release"


def checkout_files():
    """(source, destination inside the package) for every file copied in."""
    files = [(REPO / "schema" / "program.fbs", Path("_data") / "program.fbs")]
    build = build_dir()
    kernel_list = build / "registered_kernels.txt"
    if kernel_list.is_file():
        files.append((kernel_list, Path("_data") / "registered_kernels.txt"))
    for module in sorted((build / "python").glob("_torchlight_runtime*.so")):
        files.append((module, Path("_native") / module.name))
    return files


class BuildPyWithCheckoutFiles(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # An editable install reads the checkout directly.
        package_dir = Path(self.build_lib) / "torchlight"
        for source, destination in checkout_files():
            if not source.is_file():
                raise FileNotFoundError(f"{source} is missing: the package needs it")
            target = package_dir / destination
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


# Build products go under the checkout's ignored build/, not into python/.
SCRATCH = REPO / "build" / "python-package"
SCRATCH.mkdir(parents=True, exist_ok=True)

setup(cmdclass={"build_py": BuildPyWithCheckoutFiles},
      options={"build": {"build_base": str(SCRATCH / "build")},
               "egg_info": {"egg_base": str(SCRATCH)}})
