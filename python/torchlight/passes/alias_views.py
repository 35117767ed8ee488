"""alias_views: views of planned intermediates share their base's memory.

view_to_copy turned every view into a *_copy operator, one copy each. Every
tensor of a .pte is laid out contiguously (row-major), so a reshape of one
(view, _unsafe_view, squeeze, unsqueeze, alias, an expand or clone that
changes nothing) holds the same bytes in the same order, and a select or
slice of the outer dimension is a contiguous block at an offset. When the
base lives in the arena and is never written after it is computed (the
graph is functional), such a view can simply be the base's bytes.
"""

from __future__ import annotations

import operator
from typing import Dict, Optional, Sequence, Set, Tuple

import torch
import torch.fx

from torchlight import ops
from torchlight.method_graph import MethodGraph, is_symbolic, upper_bound_sizes
from torchlight.passes.buffer_writes import WRITE_INTO
from torchlight.passes.memory_planning import ALIASES
from torchlight.passes.out_variants import ALIAS_OF, ALIAS_OFFSET, OUT_ALLOCS, VIEW_ALIAS

aten = torch.ops.aten

# Out variants whose result is self's elements in self's row-major order.
_RESHAPES = {aten.view_copy.out, aten._unsafe_view.out, aten.alias_copy.out,
             aten.detach_copy.out, aten.squeeze_copy.out, aten.squeeze_copy.dim_out,
             aten.squeeze_copy.dims_out, aten.unsqueeze_copy.out}
# Views of one index / a range of one dimension: contiguous when every
# dimension before it has size 1 (static shapes only).
_SUB_BLOCKS = {aten.select_copy.int_out, aten.slice_copy.Tensor_out}
_KEEPS_LAYOUT = (None, torch.contiguous_format, torch.preserve_format)

Root = Tuple[torch.fx.Node, int]  # (planned alloc owning the bytes, byte offset into it)


def _same_size(a, b) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.node.expr == b.node.expr


def _same_shape(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dim() == b.dim() and all(_same_size(x, y) for x, y in zip(a.shape, b.shape))


def _static(val: torch.Tensor) -> bool:
    return not any(is_symbolic(s) for s in val.shape)


def _numel(sizes: Sequence[int]) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def _arg(node: torch.fx.Node, index: int, name: str, default):
    if index < len(node.args):
        return node.args[index]
    return node.kwargs.get(name, default)


def _sub_block_offset(node: torch.fx.Node, base: torch.Tensor) -> Optional[int]:
    """Bytes from the base's start to a select/slice's first element, or
    None when the selected elements are not one contiguous block."""
    select = node.target == aten.select_copy.int_out
    names = ("dim", "index") if select else ("dim", "start", "end", "step")
    args = [_arg(node, i + 1, name, None) for i, name in enumerate(names)]
    if not _static(base) or any(isinstance(a, torch.fx.Node) for a in args):
        return None
    sizes = [int(s) for s in base.shape]
    dim = args[0] if args[0] is not None else 0
    if not sizes or not -len(sizes) <= dim < len(sizes):
        return None
    dim %= len(sizes)
    if any(s != 1 for s in sizes[:dim]):
        return None  # Outer dimensions would interleave other elements.
    row = _numel(sizes[dim + 1:]) * base.element_size()
    if select:
        index = args[1]
        return (index % sizes[dim]) * row if -sizes[dim] <= index < sizes[dim] else None
    step = args[3] if args[3] is not None else 1
    if step != 1:
        return None
    start, _, _ = slice(args[1], args[2], 1).indices(sizes[dim])
    return start * row


def _view_offset(node: torch.fx.Node) -> Optional[int]:
    """For a node that can alias its input, the byte offset of its elements
    in the input; None otherwise."""
    target = node.target
    base = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    val = node.meta.get("val")
    if not isinstance(base, torch.Tensor) or not isinstance(val, torch.Tensor) or \
            base.dtype != val.dtype:
        return None
    if target in _RESHAPES:
        return 0
    if target == aten.expand_copy.out:
        return 0 if _same_shape(base, val) else None
    if target == aten.clone.out:
        return 0 if node.kwargs.get("memory_format") in _KEEPS_LAYOUT else None
    if target in _SUB_BLOCKS and _static(val):
        return _sub_block_offset(node, base)
    return None


class _Roots:
    """Where each node's value lives: the planned alloc owning its bytes and
    the offset into it, or None (an input, a constant, a mutable buffer, a
    value with several possible owners, ...)."""

    def __init__(self):
        self.cache: Dict[torch.fx.Node, Optional[Root]] = {}

    def of(self, node: torch.fx.Node) -> Optional[Root]:
        if node not in self.cache:
            self.cache[node] = self._find(node)
        return self.cache[node]

    def _find(self, node: torch.fx.Node) -> Optional[Root]:
        if ops.is_alloc(node):
            target = node.meta.get(ALIAS_OF)
            if target is None:
                return node, 0
            if not ops.is_alloc(target):
                return None  # Lives in a mutable buffer's slot.
            return target, node.meta.get(ALIAS_OFFSET, 0)
        allocs = node.meta.get(OUT_ALLOCS)
        if allocs is not None and len(allocs) == 1:
            return self.of(allocs[0])
        if node.op == "call_function" and node.target is operator.getitem:
            allocs = node.args[0].meta.get(OUT_ALLOCS) if isinstance(node.args[0], torch.fx.Node) \
                else None
            if allocs is not None and isinstance(node.args[1], int):
                return self.of(allocs[node.args[1]])
        return None


def _nbytes(method: MethodGraph, node: torch.fx.Node) -> int:
    val = node.meta["val"]
    return _numel(upper_bound_sizes(val, method, node)) * val.element_size()


def _replace_node(method: MethodGraph, node: torch.fx.Node, alloc: torch.fx.Node) -> None:
    """Removes `node`, whose value is now `alloc`'s, wherever it is named:
    graph uses, buffer writes, and ALIASES lists (torch.cond results)."""
    node.replace_all_uses_with(alloc)
    for buffer, value in method.buffer_writes.items():
        if value is node:
            method.buffer_writes[buffer] = alloc
    for other in method.graph.nodes:
        aliases = other.meta.get(ALIASES)
        if aliases is not None and node in aliases:
            other.meta[ALIASES] = [alloc if a is node else a for a in aliases]
    method.graph.erase_node(node)


def alias_views(method: MethodGraph, alloc_graph_output: bool = True) -> MethodGraph:
    """Makes each view whose base is a planned intermediate read the base's
    own bytes instead of a copy.

    Candidates: the out variants of view/_unsafe_view/alias/detach/squeeze/
    unsqueeze, expand to the same shape, clone keeping the layout, and (with
    static shapes) select/slice of a contiguous block. A candidate is aliased
    when its input's bytes belong to one planned alloc (not a user input, a
    constant or a mutable buffer; with `alloc_graph_output` False, not a
    graph output either), it is not itself a graph output, and its
    upper-bound size fits in that alloc from its offset. Its out alloc is
    then marked ALIAS_OF the root alloc (views of views resolve to the
    root), ALIAS_OFFSET bytes in:
      - static shapes: the call is removed (VIEW_ALIAS "static"); its users
        read the alloc, which memory planning places inside the root;
      - dynamic shapes: the call stays to resize its out at run time
        (VIEW_ALIAS "resized"); the kernel sees out sharing self's data and
        copies nothing.
    Memory planning keeps the root live while any alias is used.
    """
    graph = method.graph
    roots = _Roots()
    output_nodes: list = []
    torch.fx.node.map_arg(method.output_node().args, output_nodes.append)
    outputs: Set[torch.fx.Node] = set(output_nodes)
    output_roots = {r[0] for r in (roots.of(n) for n in output_nodes) if r is not None}
    for node in list(graph.nodes):
        if node.op != "call_function" or node in outputs or WRITE_INTO in node.meta:
            continue
        allocs = node.meta.get(OUT_ALLOCS)
        if not allocs or len(allocs) != 1 or not node.args or \
                not isinstance(node.args[0], torch.fx.Node):
            continue
        offset = _view_offset(node)
        root = roots.of(node.args[0]) if offset is not None else None
        if root is None or (not alloc_graph_output and root[0] in output_roots):
            continue
        owner, base_offset = root
        alloc = allocs[0]
        if base_offset + offset + _nbytes(method, alloc) > _nbytes(method, owner):
            continue  # Upper bounds that do not nest; keep the copy.
        alloc.meta[ALIAS_OF] = owner
        alloc.meta[ALIAS_OFFSET] = base_offset + offset
        roots.cache[alloc] = (owner, base_offset + offset)
        if _static(node.meta["val"]):
            alloc.meta[VIEW_ALIAS] = "static"
            _replace_node(method, node, alloc)
        else:
            alloc.meta[VIEW_ALIAS] = "resized"
            roots.cache[node] = (owner, base_offset + offset)
    method.graph_module.recompile()
    return method
