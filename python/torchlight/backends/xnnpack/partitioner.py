"""XnnpackPartitioner: tags what the XNNPACK delegate can run.

Every operator support.py accepts (by op, dtype and shape, a dynamic dim
only with an upper bound, with upstream's config constraints) joins the
largest convex group torch's CapabilityBasedPartitioner can form; the rest
stays on portable kernels. 8da4w linears (torchlight.llm.quantize) are taken
whole, per-token chain and group-wise weight included, and become XNNPACK's
qd8-f32-qb4w fully-connected; the fused torchlight::linear_8da4w kernel then
only sees the ones left out. verbose=True prints, per node left out, its
name and the reason.
"""

from __future__ import annotations

import logging
import operator
import sys
from typing import Dict, List, Optional, Sequence, Set, Tuple

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from torchlight.backends.xnnpack import quant, support
from torchlight.backends.xnnpack.preprocess import BACKEND_ID
from torchlight.delegation import DELEGATION_TAG, DelegationSpec, Partitioner, PartitionResult
from torchlight.errors import target_name

logger = logging.getLogger("torchlight.xnnpack")
aten = torch.ops.aten

# Operators that only move or relabel data: a partition of nothing else is
# not worth a delegate call.
_DATA_MOVEMENT = {
    aten.view.default, aten.view_copy.default, aten.reshape.default, aten._unsafe_view.default,
    aten.squeeze.dim, aten.squeeze.dims, aten.squeeze_copy.dims, aten.unsqueeze.default,
    aten.unsqueeze_copy.default, aten.clone.default, aten.alias.default, aten.alias_copy.default,
    aten.permute.default, aten.permute_copy.default, aten.t.default, aten.t_copy.default,
    aten.transpose.int, aten.transpose_copy.int, operator.getitem,
}


def constant_placeholders(ep: ExportedProgram) -> Dict[str, Optional[torch.Tensor]]:
    """The placeholders that hold parameters, never-written buffers and
    lifted constants (what the delegate may pack as constants), by name, with
    their values (checks such as "zero points are all zero" read them)."""
    signature = ep.graph_signature
    mutated = {s.target for s in signature.output_specs if s.kind == OutputKind.BUFFER_MUTATION}
    found = {}
    for s in signature.input_specs:
        if s.kind in (InputKind.PARAMETER, InputKind.CONSTANT_TENSOR) or \
                (s.kind == InputKind.BUFFER and s.target not in mutated):
            value = ep.state_dict.get(s.target)
            if value is None:
                value = ep.constants.get(s.target)
            found[s.arg.name] = value
    return found


class _Support(OperatorSupportBase):
    def __init__(self, constants: Dict[str, Optional[torch.Tensor]],
                 rejected: List[Tuple[str, str, str]]):
        super().__init__()
        self.constants = constants
        self.rejected = rejected
        self.seen: Set[str] = set()

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        reason = support.unsupported_reason(node, self.constants)
        if reason is not None and node.op == "call_function" and node.name not in self.seen:
            self.seen.add(node.name)
            self.rejected.append((node.name, target_name(node), reason))
        return reason is None


def _folded_quant(node: torch.fx.Node) -> bool:
    """q/dq nodes XNNPACK folds into the operator that reads them: weight
    dequantizes and dynamic (per-tensor or per-token) activation chains."""
    target = node.target
    if target is operator.getitem:
        source = node.args[0]
        return isinstance(source, torch.fx.Node) and _folded_quant(source)
    if target in quant.PER_TOKEN + quant.CHOOSE_QPARAMS + quant.DYNAMIC_QUANTIZE + \
            quant.DYNAMIC_DEQUANTIZE:
        return True
    if target in quant.DEQUANTIZE:  # of a constant weight, not a static activation
        return target not in quant.DEQUANTIZE_PER_TENSOR or (
            isinstance(node.args[0], torch.fx.Node) and
            node.args[0].op in ("placeholder", "get_attr"))
    return False


def _folded_inputs(node: torch.fx.Node, checker) -> List[torch.fx.Node]:
    """The supported q/dq nodes `node` reads through (transitively), which
    must sit in its partition for preprocess to fold them."""
    found: List[torch.fx.Node] = []
    stack = list(node.all_input_nodes)
    while stack:
        n = stack.pop()
        if n in found or n.op != "call_function" or not _folded_quant(n) or \
                not checker.is_node_supported(None, n):
            continue
        found.append(n)
        stack.extend(n.all_input_nodes)
    return found


class XnnpackPartitioner(Partitioner):
    """Upstream's constructor: XnnpackPartitioner(configs=None,
    config_precisions=None, per_op_mode=False, verbose=False, **kwargs).
    `configs` and `config_precisions` are accepted for compatibility; every
    supported operator and precision is enabled. per_op_mode puts each
    operator in a partition of its own."""

    def __init__(self, configs=None, config_precisions=None, per_op_mode: bool = False,
                 verbose: bool = False, **kwargs):
        self.configs = configs
        self.config_precisions = config_precisions
        self.per_op_mode = per_op_mode
        self.verbose = verbose
        self.options = kwargs
        self.rejected: List[Tuple[str, str, str]] = []  # (node, operator, reason) of the last run
        self.delegation_spec = DelegationSpec(BACKEND_ID, [])

    def ops_to_not_decompose(self, ep: Optional[ExportedProgram] = None) \
            -> Tuple[List[torch._ops.OpOverload], Optional[object]]:
        """Operators to_edge_transform_and_lower keeps whole for this partitioner."""
        return [aten.linear.default, aten.upsample_bilinear2d.vec, aten.hardswish.default,
                aten.leaky_relu.default, aten.elu.default], None

    def _groups(self, gm: torch.fx.GraphModule, checker: _Support) -> List[List[torch.fx.Node]]:
        if not self.per_op_mode:
            proposed = CapabilityBasedPartitioner(
                gm, checker, allows_single_node_partition=True).propose_partitions()
            return [list(p.nodes) for p in proposed]
        groups, placed = [], set()
        for node in gm.graph.nodes:
            if node in placed or node.op != "call_function" or not checker.is_node_supported(
                    None, node):
                continue
            if node.target is operator.getitem or _folded_quant(node):
                continue  # Joins its source's / its consumer's group.
            folded = _folded_inputs(node, checker)
            if placed & set(folded):
                self.rejected.append((node.name, target_name(node),
                                      "its quantize chain is shared with an operator already "
                                      "delegated on its own (per-op mode)"))
                continue
            group = [node] + folded
            group += [u for n in group for u in n.users
                      if u.target is operator.getitem and u not in group]
            placed.update(group)
            groups.append(group)
        return groups

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        gm = exported_program.graph_module
        self.rejected = []
        checker = _Support(constant_placeholders(exported_program), self.rejected)
        tags = {}
        for group in self._groups(gm, checker):
            if all(n.target in _DATA_MOVEMENT or quant.is_qdq(n) for n in group):
                for node in group:
                    self.rejected.append((node.name, target_name(node),
                                          "its partition would only move data"))
                continue
            tag = f"xnnpack_{len(tags)}"
            for node in group:
                node.meta[DELEGATION_TAG] = tag
            tags[tag] = self.delegation_spec
        if self.verbose:
            for name, target, reason in self.rejected:
                message = f"XNNPACK does not take node '{name}' ({target}): {reason}"
                logger.info(message)
                print(message, file=sys.stderr)
        return PartitionResult(exported_program, tags)


class XnnpackFloatingPointPartitioner(XnnpackPartitioner):
    """Upstream's preset for float programs."""


class XnnpackQuantizedPartitioner(XnnpackPartitioner):
    """Upstream's preset for statically quantized programs."""


class XnnpackDynamicallyQuantizedPartitioner(XnnpackPartitioner):
    """Upstream's preset for dynamically quantized linears: one operator per partition."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("per_op_mode", True)
        super().__init__(*args, **kwargs)
