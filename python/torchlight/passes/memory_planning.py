"""plan_memory: place every non-constant tensor in an arena.

Two algorithms:
  - "greedy": lifetime-based reuse. Tensors are placed largest first, each at
    the lowest offset that does not overlap (in bytes) any already-placed
    tensor whose lifetime overlaps its own.
  - "naive": every tensor gets its own bytes, one after another.

An alloc marked ALIAS_OF another storage (a mutable buffer it updates in
place, or the base a copy-free view reads, see alias_views.py) gets no bytes
of its own: it is placed at its target's offset plus ALIAS_OFFSET, and every
use of it keeps the target alive.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
import torch.fx

from torchlight import ops
from torchlight.method_graph import MemorySummary, MethodGraph, upper_bound_sizes
from torchlight.passes.out_variants import ALIAS_OF, ALIAS_OFFSET, OUT_ALLOCS, VIEW_ALIAS

# Meta key: (memory_id, offset) of a planned tensor's storage.
ALLOCATION = "tl_allocation"
# Meta key: on a node whose value is, at run time, one of several other
# nodes' values (a torch.cond result, see control_flow.py), those nodes.
ALIASES = "tl_aliases"

ALGORITHMS = ("greedy", "naive")


@dataclass
class _Planned:
    node: torch.fx.Node  # The node owning the storage (placeholder or alloc).
    nbytes: int          # Aligned size.
    start: int           # Index of the first node that writes or reads it.
    end: int             # Index of the last node that reads it.
    offset: int = -1


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _nbytes(method: MethodGraph, node: torch.fx.Node) -> int:
    val = node.meta["val"]
    numel = 1
    for size in upper_bound_sizes(val, method, node):
        numel *= size
    return numel * val.element_size()


def _storage_of(method: MethodGraph) -> Dict[torch.fx.Node, List[torch.fx.Node]]:
    """For each node, the storage-owning nodes its value lives in."""
    storage: Dict[torch.fx.Node, List[torch.fx.Node]] = {}
    for node in method.graph.nodes:
        if node.op == "placeholder":
            storage[node] = [node]
        elif ops.is_alloc(node):
            target = node.meta.get(ALIAS_OF)
            storage[node] = [node] if target is None else storage.get(target, [target])
        elif OUT_ALLOCS in node.meta:
            storage[node] = [s for a in node.meta[OUT_ALLOCS] for s in storage[a]]
        elif ALIASES in node.meta:
            storage[node] = [s for a in node.meta[ALIASES] for s in storage.get(a, [])]
        elif node.op == "call_function" and node.target is operator.getitem:
            allocs = node.args[0].meta.get(OUT_ALLOCS)
            if allocs is not None:
                storage[node] = storage[allocs[node.args[1]]]
    return storage


def plan_memory(method: MethodGraph, algorithm: str = "greedy", alignment: int = 16,
                alloc_graph_input: bool = True, alloc_graph_output: bool = True) -> MethodGraph:
    """Gives planned tensors (mutable buffers; user inputs unless
    `alloc_graph_input` is False; allocs, except those reaching the outputs
    when `alloc_graph_output` is False) a place: meta "tl_allocation" =
    (memory_id, offset), all in arena 1, offsets and sizes `alignment`-aligned.

    Afterwards method.memory summarises the arena sizes and counts the
    aliased views. Mutable buffers live for the whole method and across
    calls, so their bytes are never shared. An alloc marked ALIAS_OF a
    buffer or a planned tensor uses that slot, ALIAS_OFFSET bytes in; the
    target then stays live as long as the alias is used.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown memory planning algorithm '{algorithm}'; "
                         f"expected one of {', '.join(ALGORITHMS)}")
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"memory alignment must be a power of two, got {alignment}")
    nodes = list(method.graph.nodes)
    storage = _storage_of(method)
    output_nodes: List[torch.fx.Node] = []
    torch.fx.node.map_arg(method.output_node().args, output_nodes.append)
    outputs = {owner for n in output_nodes for owner in storage.get(n, [])}
    forever = len(nodes)

    planned: Dict[torch.fx.Node, _Planned] = {}
    for index, node in enumerate(nodes):
        if node.op == "placeholder":
            wanted = node in method.mutable_buffers or (
                alloc_graph_input and node in method.user_inputs and
                isinstance(node.meta.get("val"), torch.Tensor))
        else:
            wanted = ops.is_alloc(node) and ALIAS_OF not in node.meta and (
                alloc_graph_output or node not in outputs)
        if wanted:
            planned[node] = _Planned(node, _align(_nbytes(method, node), alignment),
                                     index, index)
    for index, node in enumerate(nodes):
        for used in node.all_input_nodes:
            for owner in storage.get(used, []):
                if owner in planned:
                    planned[owner].end = max(planned[owner].end, index)
    for owner in outputs:
        if owner in planned:
            planned[owner].end = forever
    for buffer in method.mutable_buffers:
        if buffer in planned:
            planned[buffer].start, planned[buffer].end = 0, forever

    items = list(planned.values())
    if algorithm == "naive":
        cursor = 0
        for item in items:
            item.offset = cursor
            cursor += item.nbytes
    else:
        placed: List[_Planned] = []
        for item in sorted(items, key=lambda p: (-p.nbytes, p.start)):
            live = sorted((p for p in placed if p.start <= item.end and item.start <= p.end),
                          key=lambda p: p.offset)
            candidate = 0
            for other in live:
                if other.offset - candidate >= item.nbytes:
                    break
                candidate = max(candidate, other.offset + other.nbytes)
            item.offset = candidate
            placed.append(item)

    arena = max((p.offset + p.nbytes for p in items), default=0)
    for item in items:
        item.node.meta[ALLOCATION] = (1, item.offset)
    views = resized_views = 0
    for node in nodes:  # Aliases share their target's place (targets come first).
        if ops.is_alloc(node) and ALIAS_OF in node.meta:
            memory_id, offset = node.meta[ALIAS_OF].meta[ALLOCATION]
            node.meta[ALLOCATION] = (memory_id, offset + node.meta.get(ALIAS_OFFSET, 0))
            kind = node.meta.get(VIEW_ALIAS)
            views += kind is not None
            resized_views += kind == "resized"
    method.memory = MemorySummary(algorithm=algorithm, alignment=alignment,
                                  arena_sizes=[arena] if items else [],
                                  num_planned=len(items),
                                  unshared_bytes=sum(p.nbytes for p in items),
                                  aliased_views=views, resized_in_place_views=resized_views)
    return method


def allocation_of(node: torch.fx.Node) -> Optional[tuple]:
    return node.meta.get(ALLOCATION)
