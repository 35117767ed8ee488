"""The test delegate backend, ahead-of-time half (runtime half:
backends/test_backend/test_backend.h, which documents the blob layout).

It takes element-wise float32 add, sub and mul of same-shaped tensors (a
Python number may stand for either operand) and proves that partitioning,
preprocess, serialization and the runtime's BackendRegistry fit together.
"""

from __future__ import annotations

import struct
from typing import Dict, List

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from torchlight.delegation import (DELEGATION_TAG, BackendDetails, CompileSpec, DelegationSpec,
                                   Partitioner, PartitionResult, PreprocessResult,
                                   register_backend)
from torchlight.errors import node_error

BACKEND_ID = "TorchlightTestBackend"
VERSION = 1

_OPCODES = {torch.ops.aten.add.Tensor: 1, torch.ops.aten.sub.Tensor: 2,
            torch.ops.aten.mul.Tensor: 3}


def version_spec(version: int = VERSION) -> CompileSpec:
    """The compile spec the runtime backend requires ("version" = "1")."""
    return CompileSpec("version", str(version).encode())


def _is_float_tensor(value) -> bool:
    return isinstance(value, torch.fx.Node) and isinstance(value.meta.get("val"), torch.Tensor) \
        and value.meta["val"].dtype == torch.float32


def supports(node: torch.fx.Node) -> bool:
    """Whether the backend can run `node`: add/sub/mul on float32 tensors of
    the node's own static shape, or Python numbers."""
    if node.op != "call_function" or node.target not in _OPCODES:
        return False
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
        return False
    if any(not isinstance(s, int) for s in val.shape):
        return False
    for operand in node.args[:2]:
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            continue
        if not _is_float_tensor(operand) or tuple(operand.meta["val"].shape) != tuple(val.shape):
            return False
    alpha = node.kwargs.get("alpha", 1)
    return isinstance(alpha, (int, float)) and not isinstance(alpha, bool)


class TestBackend(BackendDetails):
    __test__ = False  # Not a pytest test class, despite the name.

    @staticmethod
    def preprocess(graph_module: torch.fx.GraphModule,
                   compile_specs: List[CompileSpec]) -> PreprocessResult:
        """Numbers each value a slot (inputs first) and writes one
        instruction per node."""
        slots: Dict[torch.fx.Node, int] = {}
        constants: List[tuple] = []
        instructions: List[bytes] = []
        next_slot = 0
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        for node in placeholders:
            slots[node] = next_slot
            next_slot += 1

        def operand(value) -> int:
            nonlocal next_slot
            if isinstance(value, torch.fx.Node):
                return slots[value]
            constants.append((next_slot, float(value)))
            next_slot += 1
            return next_slot - 1

        outputs: List[int] = []
        for node in graph_module.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = [slots[n] for n in node.args[0]]
                continue
            if not supports(node):
                raise node_error(node, f"is not supported by {BACKEND_ID}")
            a, b = operand(node.args[0]), operand(node.args[1])
            slots[node] = next_slot
            next_slot += 1
            alpha = float(node.kwargs.get("alpha", 1))
            instructions.append(struct.pack("<IIIIf", _OPCODES[node.target], a, b, slots[node],
                                            alpha))
        blob = b"TLTB" + struct.pack("<6I", VERSION, len(placeholders), len(outputs), next_slot,
                                     len(constants), len(instructions))
        blob += b"".join(struct.pack("<If", slot, value) for slot, value in constants)
        blob += b"".join(instructions)
        blob += b"".join(struct.pack("<I", slot) for slot in outputs)
        return PreprocessResult(blob)


register_backend(BACKEND_ID, TestBackend)


class _Support(OperatorSupportBase):
    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return supports(node)


class TestBackendPartitioner(Partitioner):
    """Delegates every maximal group of supported nodes (kept convex by
    torch's CapabilityBasedPartitioner) to the test backend."""

    __test__ = False

    def __init__(self, compile_specs: List[CompileSpec] = None):
        self.compile_specs = list(compile_specs) if compile_specs is not None else [version_spec()]

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        partitioner = CapabilityBasedPartitioner(exported_program.graph_module, _Support(),
                                                 allows_single_node_partition=True)
        tags = {}
        for i, partition in enumerate(partitioner.propose_partitions()):
            tag = f"tl_test_{i}"
            for node in partition.nodes:
                node.meta[DELEGATION_TAG] = tag
            tags[tag] = DelegationSpec(BACKEND_ID, self.compile_specs)
        return PartitionResult(exported_program, tags)
