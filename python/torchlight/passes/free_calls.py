"""plan_input_frees: where a FreeCall ends the borrow of each unplanned input.

The spec's FreeCall releases storage the method does not plan. In a .pte
from torchlight the only such tensors are inputs left unplanned
(alloc_graph_input=False): the method borrows the caller's memory for them.
The runtime treats a FreeCall of an input as the end of that borrow: the
next execute refuses to run until set_input binds the input again, instead
of reading a buffer the caller may have released after the previous run.
"""

from __future__ import annotations

from typing import Dict, List

import torch
import torch.fx

from torchlight.method_graph import MethodGraph
from torchlight.passes import control_flow
from torchlight.passes.memory_planning import ALIASES, ALLOCATION

# Meta key: on a node, the input placeholders to free right after it.
FREE_AFTER = "tl_free_after"


def _readers(node: torch.fx.Node, aliases: Dict[torch.fx.Node, List[torch.fx.Node]]):
    """Nodes that read `node`'s value, directly or through a cond result aliasing it."""
    seen, stack = set(), [node]
    while stack:
        current = stack.pop()
        for user in current.users:
            if user not in seen:
                seen.add(user)
                yield user
        for alias in aliases.get(current, []):
            if alias not in seen:
                seen.add(alias)
                stack.append(alias)


def plan_input_frees(method: MethodGraph) -> MethodGraph:
    """Marks, for every unplanned tensor input (no ALLOCATION) that is not a
    method output, the node after which it is freed: its last reader, or the
    end of the outermost cond holding that reader, so the FreeCall runs
    whichever branch was taken (meta FREE_AFTER). Run after plan_memory.
    Afterwards the emitter writes one FreeCall per marked input.
    """
    nodes = list(method.graph.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    # The node closing the outermost cond around each position (or itself).
    top_level: Dict[int, torch.fx.Node] = {}
    depth, pending = 0, []
    for i, n in enumerate(nodes):
        if n.op == "call_function" and n.target is control_flow.cond_begin:
            depth += 1
        pending.append(i)
        if n.op == "call_function" and n.target is control_flow.cond_end:
            depth -= 1
        if depth == 0:
            for k in pending:
                top_level[k] = n
            pending = []
    aliases: Dict[torch.fx.Node, List[torch.fx.Node]] = {}
    for n in nodes:
        for source in n.meta.get(ALIASES, []):
            aliases.setdefault(source, []).append(n)

    output = method.output_node()
    for placeholder in method.user_inputs:
        if not isinstance(placeholder.meta.get("val"), torch.Tensor):
            continue
        if ALLOCATION in placeholder.meta:
            continue
        readers = list(_readers(placeholder, aliases))
        if output in readers:
            continue  # The caller reads it back after execute.
        last = max((order[r] for r in readers), default=order[placeholder])
        after = top_level.get(last, nodes[last])
        if after.op == "placeholder":  # Unread: free once every input is bound.
            after = method.user_inputs[-1]
        after.meta.setdefault(FREE_AFTER, []).append(placeholder)
    return method
