"""lower_in_place_calls: mutating custom ops update the method's buffers in place.

torch.export functionalizes a call of an operator that writes its arguments
(e.g. torchlight::sdpa_with_kv_cache, which appends to key_cache and
value_cache): it becomes the higher-order op

    af = auto_functionalized(op, q=..., key_cache=buf_k, value_cache=buf_v, ...)
    out, new_k, new_v = af[0], af[1], af[2]

and the signature writes new_k, new_v back into the buffers. A .pte can do
better: call the operator's out variant with the buffers themselves as the
mutated arguments, so the kernel updates them where they live and no copy of
the new value is needed.
"""

from __future__ import annotations

import operator
from typing import Dict, List, Tuple

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight import ops
from torchlight.errors import raise_all
from torchlight.method_graph import MethodGraph
from torchlight.passes.out_variants import MUTATES_BUFFERS

# Importing the module registers torch.ops.higher_order.auto_functionalized.
from torch._higher_order_ops import auto_functionalize as _auto_functionalize  # noqa: E402

_AUTO_FUNCTIONALIZED = _auto_functionalize.auto_functionalized
_AUTO_FUNCTIONALIZED_V2 = getattr(_auto_functionalize, "auto_functionalized_v2", None)

Problems = List[Tuple[torch.fx.Node, str]]


def _mutated_arguments(op: OpOverload) -> List[torch._C.Argument]:
    return [a for a in op._schema.arguments
            if a.alias_info is not None and a.alias_info.is_write and not a.is_out]


def _check(method: MethodGraph, node: torch.fx.Node, op, order: Dict[torch.fx.Node, int],
           problems: Problems) -> bool:
    if not isinstance(op, OpOverload):
        problems.append((node, f"functionalizes {op!r}, which is not an operator"))
        return False
    if ops.out_variant(op) is None:
        problems.append((node, f"calls {ops.qualified_name(op)}, which writes its arguments and "
                               f"has no out variant (an overload taking out=) for a .pte to "
                               f"call"))
        return False
    ok = True
    seen = set()
    for arg in _mutated_arguments(op):
        value = node.kwargs.get(arg.name)
        if value is None:
            continue
        if not (isinstance(value, torch.fx.Node) and value in method.mutable_buffers):
            what = f"'{value.name}'" if isinstance(value, torch.fx.Node) else repr(value)
            problems.append((node, f"{ops.qualified_name(op)} writes its argument "
                                   f"'{arg.name}' in place, but {what} is not a mutable buffer "
                                   f"of the method; only registered buffers (e.g. a KV cache) "
                                   f"can be updated in place in a .pte"))
            ok = False
            continue
        if value in seen:
            problems.append((node, f"passes buffer '{method.mutable_buffers[value][0]}' to two "
                                   f"arguments that {ops.qualified_name(op)} writes"))
            ok = False
        seen.add(value)
        late = [u for u in value.users if u is not node and order[u] > order[node]]
        if late:
            problems.append((late[0], f"reads buffer '{method.mutable_buffers[value][0]}' "
                                      f"as it was before {ops.qualified_name(op)} updated it in "
                                      f"place (node '{node.name}'); the update runs in place, so "
                                      f"the old value no longer exists"))
            ok = False
    return ok


def _lower(method: MethodGraph, node: torch.fx.Node, op: OpOverload,
           order: Dict[torch.fx.Node, int]) -> None:
    graph = method.graph
    out_op = ops.out_variant(op)
    names = {a.name for a in op._schema.arguments}
    kwargs = {k: v for k, v in node.kwargs.items() if k in names}
    num_returns = len(op._schema.returns)
    mutated = [kwargs.get(a.name) for a in _mutated_arguments(op)]
    vals = node.meta["val"]
    with graph.inserting_before(node):
        call = graph.call_function(out_op, (), kwargs)
    call.meta["val"] = vals[0] if num_returns == 1 else tuple(vals[:num_returns])
    call.meta["stack_trace"] = node.meta.get("stack_trace")
    call.meta[MUTATES_BUFFERS] = tuple(m for m in mutated if m is not None)
    order[call] = order[node]
    for user in list(node.users):
        index = user.args[1]
        if index >= num_returns:
            replacement = mutated[index - num_returns]
        elif num_returns == 1:
            replacement = call
        else:
            user.args = (call, index)
            continue
        user.replace_all_uses_with(replacement)
        for buffer, value in method.buffer_writes.items():
            if value is user:
                method.buffer_writes[buffer] = replacement
        graph.erase_node(user)
    graph.erase_node(node)


def lower_in_place_calls(method: MethodGraph) -> MethodGraph:
    """Replaces each auto_functionalized(op, ...) whose written arguments are
    mutable buffers of the method by one call of op's out variant: the
    buffers themselves as the written arguments, meta MUTATES_BUFFERS listing
    them (to_out_variants gives the call allocs for its out= results only).

    Afterwards the call's results are read from the call, the buffers' new
    values from the buffers (the getitems are gone), and buffer_writes maps
    each such buffer to itself, so no write-back copy is planned. Raises
    ExportError naming the node when a written argument is not a mutable
    buffer, a buffer is read as it was before the call, or the operator has
    no out variant.
    """
    graph = method.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    problems: Problems = []
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if _AUTO_FUNCTIONALIZED_V2 is not None and node.target is _AUTO_FUNCTIONALIZED_V2:
            problems.append((node, "auto_functionalized_v2 (a mutating op on views of its "
                                   "arguments) is not supported; pass the buffers themselves"))
            continue
        if node.target is not _AUTO_FUNCTIONALIZED:
            continue
        if any(u.op != "call_function" or u.target is not operator.getitem
               or not isinstance(u.args[1], int) for u in node.users):
            problems.append((node, "has a result that is used other than by indexing it"))
            continue
        op = node.args[0]
        if _check(method, node, op, order, problems):
            _lower(method, node, op, order)
    raise_all(problems, "in-place operator calls cannot be lowered")
    method.graph_module.recompile()
    return method
