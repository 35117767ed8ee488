"""Debug handles: the number that ties a runtime instruction back to the
graph node (and so the source line) it came from.

to_edge gives every node except placeholders and outputs a
meta["debug_handle"], counting from 1 in graph order (into control-flow
subgraphs too). As upstream does, nodes decomposed from one source node
share its handle: the key is the node's greatest ancestor in
meta["from_node"], which torch.export's passes keep. The emitter records
instruction index -> handle(s), and the Inspector maps ETDump events back
through that (see devtools/inspector).
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional

import torch

DEBUG_HANDLE = "debug_handle"


def source_identifier(node: torch.fx.Node) -> Optional[str]:
    """The name and graph id of the node's earliest recorded ancestor, or
    None when torch recorded no provenance."""
    sources = node.meta.get("from_node")
    if not sources or not hasattr(sources[-1], "from_node"):
        return None
    source = sources[-1]
    while source.from_node:
        source = source.from_node[-1]
    return f"{source.name}:{source.graph_id}"


def _nodes(gm: torch.fx.GraphModule) -> Iterator[torch.fx.Node]:
    """Every node of the graph and, depth first, of its subgraph modules."""
    for node in gm.graph.nodes:
        yield node
        if node.op == "get_attr":
            sub = getattr(gm, node.target, None)
            if isinstance(sub, torch.fx.GraphModule):
                yield from _nodes(sub)


def assign_debug_handles(gm: torch.fx.GraphModule) -> Dict[str, int]:
    """Sets meta["debug_handle"] on every node of `gm` that computes
    something; returns source identifier -> handle (for propagate_back)."""
    by_source: Dict[str, int] = {}
    next_handle = 1
    for node in _nodes(gm):
        if node.op in ("placeholder", "output"):
            continue
        key = source_identifier(node) or f"node:{id(node)}"
        if key not in by_source:
            by_source[key] = next_handle
            next_handle += 1
        node.meta[DEBUG_HANDLE] = by_source[key]
    return by_source


def propagate_back(gm: torch.fx.GraphModule, by_source: Dict[str, int]) -> int:
    """Copies handles onto an earlier graph of the same program (the ATen
    exported program) by source identifier; returns how many nodes got one."""
    count = 0
    for node in _nodes(gm):
        key = source_identifier(node) if node.op not in ("placeholder", "output") else None
        if key is not None and key in by_source:
            node.meta[DEBUG_HANDLE] = by_source[key]
            count += 1
    return count


def handles_in(gm: torch.fx.GraphModule) -> list:
    """The sorted distinct handles of gm's call_function nodes (a delegate's
    partition: what its DELEGATE_CALL instruction stands for)."""
    return sorted({n.meta[DEBUG_HANDLE] for n in _nodes(gm)
                   if n.op == "call_function" and n.meta.get(DEBUG_HANDLE) is not None})
