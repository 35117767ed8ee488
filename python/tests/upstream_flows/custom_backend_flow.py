"""A delegate written against upstream ExecuTorch's backend API (only the
imports say torchlight): a BackendDetails whose preprocess takes the
partition as an ExportedProgram, found by its class name, and a Partitioner
matching exir_ops.edge targets. It compiles to the blob of the runtime's
test backend (registered as "TorchlightTestBackend", blob layout in
backends/test_backend/test_backend.h), so the program runs in C++.

Run as its own process (test_upstream_api.py does): in the test session
torchlight.backends.test_backend registers a backend under the same id,
which would take precedence over the lookup by class name.

Exits non-zero, with the reason, when a check fails; prints "ok" otherwise.
"""

import struct
import sys
from typing import Dict, List

import torch
from torch.export import ExportedProgram, export
from torch.fx.passes.operator_support import OperatorSupportBase

from torchlight.exir import to_edge
from torchlight.exir.backend.backend_details import BackendDetails, PreprocessResult
from torchlight.exir.backend.canonical_partitioners.pattern_op_partitioner import (
    generate_pattern_op_partitions)
from torchlight.exir.backend.compile_spec_schema import CompileSpec
from torchlight.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from torchlight.exir.backend.utils import tag_constant_data
from torchlight.exir.dialects._ops import ops as exir_ops
from torchlight.runtime import Runtime

OPCODES = {exir_ops.edge.aten.add.Tensor: 1, exir_ops.edge.aten.sub.Tensor: 2,
           exir_ops.edge.aten.mul.Tensor: 3}
preprocessed: List[ExportedProgram] = []


class TorchlightTestBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program: ExportedProgram,
                   compile_specs: List[CompileSpec]) -> PreprocessResult:
        preprocessed.append(edge_program)
        assert [s.key for s in compile_specs] == ["version"], compile_specs
        slots: Dict[str, int] = {}
        for name in edge_program.graph_signature.user_inputs:
            slots[name] = len(slots)
        next_slot = len(slots)
        constants, instructions = [], []

        def operand(arg) -> int:
            nonlocal next_slot
            if isinstance(arg, torch.fx.Node):
                return slots[arg.name]
            constants.append(struct.pack("<If", next_slot, float(arg)))
            next_slot += 1
            return next_slot - 1

        outputs = []
        for node in edge_program.graph.nodes:
            if node.op == "call_function":
                a, b = operand(node.args[0]), operand(node.args[1])
                slots[node.name] = next_slot
                next_slot += 1
                alpha = float(node.kwargs.get("alpha", 1))
                instructions.append(struct.pack("<IIIIf", OPCODES[node.target], a, b,
                                                slots[node.name], alpha))
            elif node.op == "output":
                outputs = [slots[n.name] for n in node.args[0]]
        header = b"TLTB" + struct.pack("<6I", 1, len(edge_program.graph_signature.user_inputs),
                                       len(outputs), next_slot, len(constants),
                                       len(instructions))
        blob = header + b"".join(constants) + b"".join(instructions)
        blob += b"".join(struct.pack("<I", s) for s in outputs)
        return PreprocessResult(processed_bytes=blob)


class AddSubMulSupport(OperatorSupportBase):
    """float32 add/sub/mul whose tensor operands have the result's shape."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function" or node.target not in OPCODES:
            return False
        val = node.meta["val"]
        return val.dtype == torch.float32 and all(
            a.meta["val"].shape == val.shape for a in node.args[:2]
            if isinstance(a, torch.fx.Node))


class AddSubMulPartitioner(Partitioner):
    def __init__(self) -> None:
        super().__init__()
        self.delegation_spec = DelegationSpec(TorchlightTestBackend.__name__,
                                              [CompileSpec("version", b"1")])

    def partition(self, edge_exported_program: ExportedProgram) -> PartitionResult:
        partition_tags = {}
        for partition in generate_pattern_op_partitions(edge_exported_program.graph_module,
                                                        op_support=AddSubMulSupport()):
            for node in partition.nodes:
                tag = f"tag{partition.id}"
                node.meta["delegation_tag"] = tag
                partition_tags[tag] = self.delegation_spec
        tag_constant_data(edge_exported_program)
        return PartitionResult(tagged_exported_program=edge_exported_program,
                               partition_tags=partition_tags)


class Model(torch.nn.Module):
    def forward(self, x, y):
        a = (x + y) * 2.0 - x      # first partition
        b = torch.tanh(a)          # a portable kernel
        return b * y + b, a        # second partition


def main() -> None:
    torch.manual_seed(0)
    model = Model()
    inputs = (torch.randn(3, 4), torch.randn(3, 4))
    edge = to_edge(export(model, inputs))
    edge = edge.to_backend(AddSubMulPartitioner())
    program = edge.to_executorch()
    assert len(preprocessed) == 2, f"preprocess ran {len(preprocessed)} times, want 2"
    plan = program.executorch_program.execution_plan[0]
    ids = [d.id for d in plan.delegates]
    assert ids == ["TorchlightTestBackend"] * 2, ids
    assert program.operators() == ["aten::tanh.out"], program.operators()

    method = Runtime.get().load_program(program.buffer).load_method("forward")
    for _ in range(2):
        inputs = (torch.randn(3, 4), torch.randn(3, 4))
        got = method.execute(list(inputs))
        want = model(*inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            # float32 on both sides, same operation order: 1e-6.
            torch.testing.assert_close(g, w, atol=1e-6, rtol=1e-6)
    print("ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        raise
