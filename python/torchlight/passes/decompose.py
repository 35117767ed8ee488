"""to_core_aten: an ExportedProgram lowered to core ATen operators."""

from __future__ import annotations

from typing import Iterable

import torch
from torch.export import ExportedProgram


def to_core_aten(ep: ExportedProgram, preserve_ops: Iterable[torch._ops.OpOverload] = ()) \
        -> ExportedProgram:
    """Runs torch's core ATen decomposition table over `ep`.

    Afterwards every operator is a core ATen operator (Tag.core), a view, a
    custom (non-aten) operator, or one of `preserve_ops`, which are kept as
    they are; every node carries meta["val"] (its dtype and shape, symbolic
    for dynamic dims). `ep` itself is left unchanged.
    """
    table = torch.export.default_decompositions()
    for op in preserve_ops:
        table.pop(op, None)
    return ep.run_decompositions(table)
