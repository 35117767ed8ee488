"""scalar_to_tensor: Python numbers passed as tensor operands become constant tensors."""

from __future__ import annotations

from typing import Dict, List, Tuple

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight.errors import raise_all
from torchlight.method_graph import MethodGraph


def _tensor_typed(arg: torch._C.Argument) -> bool:
    t = arg.type
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    return isinstance(t, torch.TensorType)


def _constant_for(value) -> torch.Tensor:
    # As torch.tensor(value) would: bool, int64, or the default float dtype.
    if isinstance(value, bool):
        return torch.tensor(value, dtype=torch.bool)
    if isinstance(value, int):
        return torch.tensor(value, dtype=torch.int64)
    return torch.tensor(value, dtype=torch.get_default_dtype())


def scalar_to_tensor(method: MethodGraph) -> MethodGraph:
    """Lifts numbers in Tensor-typed arguments (`x * 3` traces to
    aten::mul.Tensor(x, 3)) into 0-d constant tensors, as the reference tool
    chain does: the .pte then holds the number in its constant segment and
    the kernel applies ATen's 0-d type promotion.

    Afterwards every Tensor-typed argument of every operator is a node.
    Equal numbers of equal dtype share one constant. Raises ExportError for
    a symbolic size used as a tensor operand.
    """
    graph = method.graph
    lifted: Dict[Tuple[type, object], torch.fx.Node] = {}
    problems: List[Tuple[torch.fx.Node, str]] = []
    for node in list(graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, OpOverload):
            continue
        args = list(node.args)
        kwargs = dict(node.kwargs)
        for i, arg in enumerate(node.target._schema.arguments):
            if not _tensor_typed(arg):
                continue
            in_args = i < len(args) and not arg.kwarg_only
            value = args[i] if in_args else kwargs.get(arg.name)
            if isinstance(value, torch.fx.Node):
                if not isinstance(value.meta.get("val"), torch.Tensor):
                    problems.append((node, f"argument '{arg.name}' is the symbolic value "
                                           f"'{value.name}', not a tensor; using sizes as tensor "
                                           f"operands is not supported yet"))
                continue
            if not isinstance(value, (bool, int, float)):
                continue
            key = (type(value), value)
            if key not in lifted:
                with graph.inserting_before(method.placeholder_insertion_point()):
                    placeholder = graph.placeholder(f"_lifted_scalar_{len(lifted)}")
                tensor = _constant_for(value)
                placeholder.meta["val"] = tensor
                method.constants[placeholder] = tensor
                lifted[key] = placeholder
            if in_args:
                args[i] = lifted[key]
            else:
                kwargs[arg.name] = lifted[key]
        node.args, node.kwargs = tuple(args), kwargs
    raise_all(problems, "operands cannot be lowered")
    method.graph_module.recompile()
    return method
