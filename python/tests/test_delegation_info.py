"""get_delegation_info on a partly XNNPACK-delegated graph: cumsum has no
XNNPACK node, so it splits the model into two delegated subgraphs; the
counts are checked against the nodes the partitioner was given."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from pandas.testing import assert_frame_equal

import torchlight
from torchlight.backends.xnnpack import XnnpackPartitioner
from torchlight.devtools.backend_debug import (DelegationBreakdown, get_delegation_info,
                                               print_delegation_info)


class SplitByCumsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.linear(x).relu()      # delegated: linear, relu
        z = torch.cumsum(y, 0)         # not delegated: XNNPACK has no cumsum
        return self.linear(z) + 1.0    # delegated: linear, add


def _lowered(model, inputs):
    torch._dynamo.reset()
    ep = torch.export.export(model, inputs)
    return torchlight.to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])


def test_partly_delegated_model_counts_per_operator():
    edge = _lowered(SplitByCumsum().eval(), (torch.randn(2, 4),))
    info = get_delegation_info(edge.exported_program().graph_module)
    assert info.num_delegated_subgraphs == 2
    assert info.num_delegated_nodes == 4
    # cumsum, and one getitem reading each delegate's result.
    assert info.num_non_delegated_nodes == 3
    assert info.delegation_by_operator == {
        "aten_linear_default": DelegationBreakdown("aten_linear_default", 2, 0),
        "aten_relu_default": DelegationBreakdown("aten_relu_default", 1, 0),
        "aten_add_tensor": DelegationBreakdown("aten_add_tensor", 1, 0),
        "aten_cumsum_default": DelegationBreakdown("aten_cumsum_default", 0, 1),
        "getitem": DelegationBreakdown("getitem", 0, 2),
    }
    assert info.get_summary() == ("Total delegated subgraphs: 2\n"
                                  "Number of delegated nodes: 4\n"
                                  "Number of non-delegated nodes: 3\n")
    expected = pd.DataFrame({
        "op_type": ["aten_add_tensor", "aten_cumsum_default", "aten_linear_default",
                    "aten_relu_default", "getitem", "Total"],
        "occurrences_in_delegated_graphs": [1, 0, 2, 1, 0, 4],
        "occurrences_in_non_delegated_graphs": [0, 1, 0, 0, 2, 3],
    })
    assert_frame_equal(info.get_operator_delegation_dataframe(), expected)
    # The ExportedProgram itself is accepted too.
    assert get_delegation_info(edge.exported_program()) == info


def test_undelegated_graph_has_no_subgraphs():
    torch._dynamo.reset()
    edge = torchlight.to_edge(torch.export.export(SplitByCumsum(), (torch.randn(2, 4),)))
    info = get_delegation_info(edge.exported_program().graph_module)
    assert info.num_delegated_subgraphs == 0 and info.num_delegated_nodes == 0
    assert info.num_non_delegated_nodes == sum(
        1 for n in edge.exported_program().graph_module.graph.nodes if n.op == "call_function")
    assert info.delegation_by_operator["aten_cumsum_default"].non_delegated == 1


def test_print_and_upstream_path(capsys):
    from executorch.devtools.backend_debug import get_delegation_info as upstream_name
    assert upstream_name is get_delegation_info
    edge = _lowered(SplitByCumsum().eval(), (torch.randn(2, 4),))
    print_delegation_info(edge.exported_program().graph_module)
    out = capsys.readouterr().out
    assert "Total delegated subgraphs: 2" in out and "aten_cumsum_default" in out
