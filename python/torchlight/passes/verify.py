"""check_edge_program: every node of an edge program is something to_executorch can lower."""

from __future__ import annotations

import operator
from typing import Iterable, List, Tuple

import torch
import torch.fx
from torch._ops import HigherOrderOperator, OpOverload
from torch.export import ExportedProgram

from torchlight import ops
from torchlight.errors import raise_all


def _has_spec(val) -> bool:
    if isinstance(val, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool, int, float,
                        bool)):
        return True
    if isinstance(val, (list, tuple)):
        return all(v is None or _has_spec(v) for v in val)
    return False


def check_edge_program(ep: ExportedProgram, preserve_ops: Iterable[OpOverload] = (),
                       check_ir_validity: bool = True) -> ExportedProgram:
    """Checks the edge dialect; returns `ep` unchanged.

    Guarantees afterwards: every placeholder and call_function node has a
    dtype/shape spec (meta["val"]); with `check_ir_validity`, every ATen
    operator is core ATen (or a view, or preserved), and the only
    higher-order operator is torch.cond, whose branches are checked the same
    way. Raises ExportError listing every offending node with its source line.
    """
    preserved = set(preserve_ops)
    problems: List[Tuple[torch.fx.Node, str]] = []
    _check_graph(ep.graph_module, preserved, check_ir_validity, problems)
    raise_all(problems, "the exported program cannot be lowered to the edge dialect")
    return ep


def _check_graph(module: torch.fx.GraphModule, preserved, check_ir_validity: bool,
                 problems: List[Tuple[torch.fx.Node, str]]) -> None:
    """Adds every offending node of `module`'s graph, and of the branches of
    its torch.cond calls, to `problems`."""
    for node in module.graph.nodes:
        if node.op not in ("placeholder", "call_function"):
            continue
        # An assertion (aten::_assert_scalar, ...) has no result to describe.
        no_result = isinstance(node.target, OpOverload) and ops.is_assertion(node.target)
        if not no_result and not _has_spec(node.meta.get("val")):
            problems.append((node, "has no dtype/shape spec (meta['val']); torch.export could "
                                   "not trace its result"))
        if node.op != "call_function" or not check_ir_validity:
            continue
        target = node.target
        if isinstance(target, OpOverload):
            namespace = target._schema.name.split("::")[0]
            if (namespace == "aten" and torch.Tag.core not in target.tags and
                    not ops.is_view(target) and not ops.returns_symbolic(target) and
                    not ops.is_assertion(target) and target not in preserved):
                problems.append((node, "is not a core ATen operator and has no decomposition; "
                                       "add it to EdgeCompileConfig.preserve_ops to keep it"))
        elif target is operator.getitem or ops.is_symbolic_function(target):
            pass
        elif target is torch.ops.higher_order.cond:
            for branch in node.args[1:3]:
                sub = getattr(module, branch.target, None) if isinstance(branch, torch.fx.Node) \
                    else None
                if isinstance(sub, torch.fx.GraphModule):
                    _check_graph(sub, preserved, check_ir_validity, problems)
                else:
                    problems.append((node, f"branch {branch!r} is not a traced submodule"))
        elif target is torch.ops.higher_order.auto_functionalized:
            pass  # A mutating op on buffers; passes/in_place_calls.py lowers it.
        elif isinstance(target, HigherOrderOperator):
            problems.append((node, f"control flow ({target.name()}) is not supported; "
                                   f"torchlight lowers torch.cond only"))
        elif not ops.is_delegate_call(target):
            problems.append((node, "calls a Python function, which a .pte cannot run"))
