"""A test delegate that also reports delegate debug id -> debug handles (what
a backend's debug map gives the ETRecord's delegate_map), the partitioner
that lowers to it, and a small model for it: shared by the ETRecord and
Inspector tests."""

from __future__ import annotations

import torch

from torchlight.backends.test_backend import TestBackend, TestBackendPartitioner
from torchlight.delegation import PreprocessResult, register_backend

MAPPED_BACKEND_ID = "MappedTestBackend"


class MappedBackend(TestBackend):
    @staticmethod
    def preprocess(graph_module, compile_specs):
        blob = TestBackend.preprocess(graph_module, compile_specs).processed_bytes
        calls = [n for n in graph_module.graph.nodes if n.op == "call_function"]
        return PreprocessResult(blob, {i: [n.meta["debug_handle"]] for i, n in enumerate(calls)})


register_backend(MAPPED_BACKEND_ID, MappedBackend)


class MappedPartitioner(TestBackendPartitioner):
    def partition(self, exported_program):
        result = super().partition(exported_program)
        for spec in result.partition_tags.values():
            spec.backend_id = MAPPED_BACKEND_ID
        return result


class Adds(torch.nn.Module):
    def forward(self, x, y):
        return (x * 2 + y) * y
