"""Python flatbuffer code for schema/xnnpack.fbs (the XN01 payload), made by
flatc on first use the way torchlight.pte.codegen does for program.fbs.

The generated package is importable as `fb_xnnpack` (the schema's
namespace), which is the module path the generated code imports itself by.
TORCHLIGHT_XNNPACK_SCHEMA overrides the schema file; TORCHLIGHT_FLATC and
TORCHLIGHT_CACHE_DIR are shared with torchlight.pte.codegen.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from torchlight.pte.codegen import SchemaCodegenError, _cache_root, flatc_path

PACKAGE = "fb_xnnpack"
FILE_IDENTIFIER = b"XN01"


def schema_path() -> Path:
    env = os.environ.get("TORCHLIGHT_XNNPACK_SCHEMA")
    path = Path(env) if env else Path(__file__).resolve().parents[4] / "schema" / "xnnpack.fbs"
    if not path.is_file():
        raise SchemaCodegenError(f"the XNNPACK payload schema was not found at {path}; set "
                                 f"TORCHLIGHT_XNNPACK_SCHEMA to schema/xnnpack.fbs")
    return path


def _generate(schema: Path, flatc: str) -> Path:
    version = subprocess.run([flatc, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip()
    key = hashlib.sha256(schema.read_bytes() + version.encode()).hexdigest()[:16]
    target = _cache_root() / f"xnnpack-py-{key}"
    marker = target / PACKAGE / "XNNGraph.py"
    if marker.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="xnnpack-py-", dir=target.parent))
    try:
        result = subprocess.run([flatc, "--python", "--gen-object-api", "-o", str(scratch),
                                 str(schema)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SchemaCodegenError(f"flatc failed on {schema}:\n{result.stderr}{result.stdout}")
        try:
            scratch.rename(target)
        except OSError:
            if not marker.is_file():  # Another process won the race with the same code.
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def load() -> types.ModuleType:
    """The generated `fb_xnnpack` package, generating it if needed."""
    existing = sys.modules.get(PACKAGE)
    if existing is not None:
        return existing
    generated = _generate(schema_path(), flatc_path()) / PACKAGE
    spec = importlib.util.spec_from_file_location(
        PACKAGE, generated / "__init__.py", submodule_search_locations=[str(generated)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    _alias_union_creators()
    return module


def _alias_union_creators() -> None:
    """flatc 23.5 names each union's creator with a lowered name
    ("XnodeUnionCreator") but calls it by the union's own name
    ("XNodeUnionCreator"); give each creator both names."""
    for union in ("XNodeUnion", "XValueUnion", "XNNQuantParams"):
        module = importlib.import_module(f"{PACKAGE}.{union}")
        for name in dir(module):
            if name.endswith("Creator") and name.lower() == f"{union}Creator".lower():
                setattr(module, f"{union}Creator", getattr(module, name))


def table(name: str) -> types.ModuleType:
    """The generated module of one table, union or enum, e.g. table("XNNGraph")."""
    load()
    return importlib.import_module(f"{PACKAGE}.{name}")
