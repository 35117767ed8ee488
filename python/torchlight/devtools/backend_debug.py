"""How much of a lowered graph went to delegates (upstream's
executorch.devtools.backend_debug): get_delegation_info(graph_module) counts
the delegated subgraphs, and the call_function nodes inside them (delegated)
and outside them (not delegated), per operator type.

Operator types are spelled as upstream's edge node names are: the operator's
namespace, name and overload joined by "_" in lower case ("aten_add_tensor",
"aten_mm_default"), and plain Python functions by name ("getitem"). They are
taken from each node's target, not its name, so our node names (which keep
torch.export's "add", "linear_1") give upstream's keys.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Dict, Union

import torch
import torch.fx

from torchlight.delegation import LoweredBackendModule, call_delegate

# Column names of get_operator_delegation_dataframe(), as upstream's.
_DELEGATED_COLUMN = "occurrences_in_delegated_graphs"
_NON_DELEGATED_COLUMN = "occurrences_in_non_delegated_graphs"


@dataclass
class DelegationBreakdown:
    """Delegated and non-delegated node counts of one operator type."""

    op_type: str = ""
    delegated: int = 0
    non_delegated: int = 0


@dataclass
class DelegationInfo:
    num_delegated_subgraphs: int
    num_delegated_nodes: int
    num_non_delegated_nodes: int
    delegation_by_operator: Dict[str, DelegationBreakdown] = field(default_factory=dict)

    def get_summary(self) -> str:
        """Three lines: subgraphs, delegated nodes, non-delegated nodes."""
        return (f"Total delegated subgraphs: {self.num_delegated_subgraphs}\n"
                f"Number of delegated nodes: {self.num_delegated_nodes}\n"
                f"Number of non-delegated nodes: {self.num_non_delegated_nodes}\n")

    def get_operator_delegation_dataframe(self):
        """A pandas DataFrame: op_type, occurrences_in_delegated_graphs,
        occurrences_in_non_delegated_graphs; one row per operator type sorted
        by op_type, then a "Total" row."""
        import pandas as pd  # Only this method needs pandas.

        rows = sorted((asdict(b) for b in self.delegation_by_operator.values()),
                      key=lambda row: row["op_type"])
        rows.append({"op_type": "Total",
                     "delegated": sum(r["delegated"] for r in rows),
                     "non_delegated": sum(r["non_delegated"] for r in rows)})
        frame = pd.DataFrame(rows, columns=["op_type", "delegated", "non_delegated"])
        return frame.rename(columns={"delegated": _DELEGATED_COLUMN,
                                     "non_delegated": _NON_DELEGATED_COLUMN})


def op_type(node: torch.fx.Node) -> str:
    """"aten_add_tensor" for aten.add.Tensor; a function's name otherwise."""
    target = node.target
    schema = getattr(target, "_schema", None)
    if schema is not None:
        namespace, _, name = schema.name.partition("::")
        overload = getattr(target, "_overloadname", "") or "default"
        return f"{namespace}_{name}_{overload}".lower()
    return getattr(target, "__name__", None) or str(target)


def _is_delegate_call(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and (
        node.target is call_delegate or getattr(node.target, "__name__", "") in (
            "call_delegate", "executorch_call_delegate"))


def get_delegation_info(graph_module: Union[torch.fx.GraphModule, "torch.export.ExportedProgram"]
                        ) -> DelegationInfo:
    """The delegation summary of a lowered graph, for example
    `edge.exported_program().graph_module` after to_backend or
    to_edge_transform_and_lower (an ExportedProgram is accepted too)."""
    if isinstance(graph_module, torch.export.ExportedProgram):
        graph_module = graph_module.graph_module
    breakdown: Dict[str, DelegationBreakdown] = {}

    def count(node: torch.fx.Node, delegated: bool) -> None:
        kind = op_type(node)
        entry = breakdown.setdefault(kind, DelegationBreakdown(op_type=kind))
        if delegated:
            entry.delegated += 1
        else:
            entry.non_delegated += 1

    subgraphs = 0
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":
            lowered = getattr(graph_module, node.target, None)
            if isinstance(lowered, LoweredBackendModule):
                subgraphs += 1
                for inner in lowered.original_module.graph.nodes:
                    if inner.op == "call_function":
                        count(inner, delegated=True)
        elif node.op == "call_function" and not _is_delegate_call(node):
            count(node, delegated=False)
    return DelegationInfo(
        num_delegated_subgraphs=subgraphs,
        num_delegated_nodes=sum(b.delegated for b in breakdown.values()),
        num_non_delegated_nodes=sum(b.non_delegated for b in breakdown.values()),
        delegation_by_operator=breakdown)


def print_delegation_info(graph_module) -> None:
    """Prints the summary and the per-operator table."""
    info = get_delegation_info(graph_module)
    print(info.get_summary())
    frame = info.get_operator_delegation_dataframe()
    try:
        from tabulate import tabulate
    except ImportError:
        print(frame.to_string())
    else:
        print(tabulate(frame, headers="keys", tablefmt="fancy_grid"))


__all__ = ["DelegationBreakdown", "DelegationInfo", "get_delegation_info",
           "print_delegation_info"]
