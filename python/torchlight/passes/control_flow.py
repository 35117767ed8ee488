"""lower_control_flow: torch.cond becomes straight-line code between jump markers.

A .pte method is one flat list of instructions, so each cond is inlined into
the method's graph as

    begin = cond_begin(pred)                 JumpFalseCall(pred) -> else
    ... true branch nodes ...
    else_ = cond_else(begin, *true_results)  MoveCall each result into the
                                             cond's result; JumpFalseCall(False) -> end
    ... false branch nodes ...
    end = cond_end(begin, else_, *false_results)   MoveCall each result
    getitem(end, i)                          the cond's i-th result

Every later pass then sees the branches as ordinary nodes: they become out
variants, and memory planning places their tensors in the method's arena.
Because the true branch's nodes all come before the false branch's, lifetime
planning lets temporaries of the two branches share bytes (only one runs).
A result of the cond is one of its branches' results at run time (MoveCall
copies the value handle), so each getitem carries meta ALIASES = [true
result, false result] and planning keeps both alive as long as it is used.

The markers are plain functions, so the lowered graph still runs eagerly
(computing both branches and picking one), which helps debugging.
"""

from __future__ import annotations

import operator
from typing import Any, List, Sequence

import torch
import torch.fx
from torch._ops import HigherOrderOperator

from torchlight.errors import node_error
from torchlight.method_graph import MethodGraph
from torchlight.passes.memory_planning import ALIASES


def cond_begin(pred: Any) -> bool:
    """Start of a cond: the true branch follows; jump to the else branch when `pred` is false."""
    return bool(pred)


def cond_else(begin: bool, *results: torch.Tensor) -> tuple:
    """End of the true branch (its results) and start of the false branch."""
    return tuple(results)


def cond_end(begin: bool, else_: tuple, *results: torch.Tensor) -> tuple:
    """End of the false branch; the cond's results, chosen by the predicate."""
    return tuple(else_) if begin else tuple(results)


for _marker in (cond_begin, cond_else, cond_end):
    _marker._torchlight_control_flow = True


def is_control_flow(target: Any) -> bool:
    """True for the markers above (nodes that emit jumps and moves, not kernels)."""
    return getattr(target, "_torchlight_control_flow", False)


def is_cond(target: Any) -> bool:
    return target is torch.ops.higher_order.cond


def _branch_module(owner: torch.nn.Module, node: torch.fx.Node, branch: Any) -> torch.fx.GraphModule:
    if not (isinstance(branch, torch.fx.Node) and branch.op == "get_attr"):
        raise node_error(node, f"branch {branch!r} is not a submodule of the exported program")
    module = owner
    for part in branch.target.split("."):
        module = getattr(module, part)
    if not isinstance(module, torch.fx.GraphModule):
        raise node_error(node, f"branch '{branch.target}' is a {type(module).__name__}, "
                               f"not a traced graph")
    return module


class _Inliner:
    def __init__(self, method: MethodGraph):
        self.method = method
        self.graph = method.graph
        self.owner = method.graph_module
        self.count = 0

    def branch(self, cond: torch.fx.Node, module: torch.fx.GraphModule,
               operands: Sequence[Any]) -> List[Any]:
        """Copies `module`'s nodes before `cond` with its inputs bound to
        `operands`; returns the copies of its results."""
        env = {}
        placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(operands):
            raise node_error(cond, f"a branch takes {len(placeholders)} inputs but the cond "
                                   f"passes {len(operands)}")
        results: List[Any] = []
        for node in module.graph.nodes:
            if node.op == "placeholder":
                env[node] = operands[placeholders.index(node)]
            elif node.op == "output":
                outputs = node.args[0]
                outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
                results = [env[o] if isinstance(o, torch.fx.Node) else o for o in outputs]
            elif node.op == "get_attr":
                # A nested cond's branch: re-registered on the method's module
                # so the copied cond finds it; the next round inlines it too.
                attr = _branch_module(module, node, node)
                name = f"_tl_branch_{self.count}"
                self.count += 1
                self.owner.add_submodule(name, attr)
                env[node] = self.graph.get_attr(name)
            else:
                env[node] = self.graph.node_copy(node, lambda n: env[n])
                if "stack_trace" not in env[node].meta:
                    env[node].meta["stack_trace"] = cond.meta.get("stack_trace")
        return results

    def inline(self, cond: torch.fx.Node) -> None:
        pred, true_branch, false_branch, operands = cond.args
        true_module = _branch_module(self.owner, cond, true_branch)
        false_module = _branch_module(self.owner, cond, false_branch)
        graph = self.graph
        trace = cond.meta.get("stack_trace")
        with graph.inserting_before(cond):
            begin = graph.call_function(cond_begin, (pred,))
            begin.meta.update(val=pred.meta.get("val") if isinstance(pred, torch.fx.Node)
                              else pred, stack_trace=trace)
            true_results = self.branch(cond, true_module, list(operands))
            else_ = graph.call_function(cond_else, (begin, *true_results))
            else_.meta.update(val=tuple(r.meta.get("val") for r in true_results),
                              stack_trace=trace)
            false_results = self.branch(cond, false_module, list(operands))
            end = graph.call_function(cond_end, (begin, else_, *false_results))
            end.meta.update(val=cond.meta.get("val"), stack_trace=trace)
        results = cond.meta.get("val")
        count = len(results) if isinstance(results, (tuple, list)) else 1
        if len(true_results) != count or len(false_results) != count:
            raise node_error(cond, f"the branches return {len(true_results)} and "
                                   f"{len(false_results)} values, the cond {count}")
        for user in list(cond.users):
            if user.op != "call_function" or user.target is not operator.getitem:
                raise node_error(user, "uses a cond's results other than by indexing them")
            index = user.args[1]
            user.meta[ALIASES] = [true_results[index], false_results[index]]
        cond.replace_all_uses_with(end)
        graph.erase_node(cond)
        for branch in (true_branch, false_branch):
            if not branch.users:
                graph.erase_node(branch)


def lower_control_flow(method: MethodGraph) -> MethodGraph:
    """Inlines every torch.cond (nested ones too) between cond_begin /
    cond_else / cond_end markers, as the module docstring shows.

    Afterwards the method's graph has no higher-order operators and no
    submodules, the true branch's nodes precede the false branch's, and each
    getitem of a cond result carries meta ALIASES. Raises ExportError, naming
    the node, for other higher-order operators (while_loop, map, ...).
    """
    inliner = _Inliner(method)
    while True:
        node = next((n for n in method.graph.nodes if n.op == "call_function" and
                     isinstance(n.target, HigherOrderOperator)), None)
        if node is None:
            break
        if not is_cond(node.target):
            raise node_error(node, f"control flow ({node.target.name()}) is not supported; "
                                   f"torchlight lowers torch.cond only")
        inliner.inline(node)
    method.graph_module.delete_all_unused_submodules()
    method.graph_module.recompile()
    return method
