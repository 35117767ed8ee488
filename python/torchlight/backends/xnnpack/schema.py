"""Python flatbuffer code for schema/xnnpack.fbs (the XN01 payload), made by
flatc on first use the way torchlight.pte.codegen does for program.fbs.

The generated package is importable as `fb_xnnpack` (the schema's
namespace), which is the module path the generated code imports itself by.
TORCHLIGHT_XNNPACK_SCHEMA overrides the schema file; TORCHLIGHT_FLATC and
TORCHLIGHT_CACHE_DIR are shared with torchlight.pte.codegen.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path

from torchlight.pte.codegen import SchemaCodegenError, flatc_path, generate_python

PACKAGE = "fb_xnnpack"
FILE_IDENTIFIER = b"XN01"


def schema_path() -> Path:
    env = os.environ.get("TORCHLIGHT_XNNPACK_SCHEMA")
    path = Path(env) if env else Path(__file__).resolve().parents[4] / "schema" / "xnnpack.fbs"
    if not path.is_file():
        raise SchemaCodegenError(f"the XNNPACK payload schema was not found at {path}; set "
                                 f"TORCHLIGHT_XNNPACK_SCHEMA to schema/xnnpack.fbs")
    return path


def load() -> types.ModuleType:
    """The generated `fb_xnnpack` package, generating it if needed."""
    existing = sys.modules.get(PACKAGE)
    if existing is not None:
        return existing
    generated = generate_python(schema_path(), flatc_path(), "xnnpack-py",
                                f"{PACKAGE}/XNNGraph.py") / PACKAGE
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
