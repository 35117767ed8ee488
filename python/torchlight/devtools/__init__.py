"""Developer tools: ETDump traces, ETRecord, the Inspector, bundled programs
and delegation summaries (upstream's executorch.devtools names). Submodules
load on first use, so importing torchlight.devtools costs nothing and needs
no pandas until the Inspector is used."""

from __future__ import annotations

import importlib

_LAZY = {
    "Inspector": "torchlight.devtools.inspector",
    "generate_etrecord": "torchlight.devtools.etrecord",
    "parse_etrecord": "torchlight.devtools.etrecord",
    "ETRecord": "torchlight.devtools.etrecord",
    "BundledProgram": "torchlight.devtools.bundled_program.core",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'torchlight.devtools' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
