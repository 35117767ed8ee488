"""fuse_llm_chains: the pointwise chains an exported Llama leaves behind
become one fused call each (torchlight/kernels/fused_pointwise.py):

  mul(mul(x, rsqrt(add(mean(pow(x, 2), [-1], keepdim), eps))), weight)
      -> torchlight::rms_norm(x, weight, eps)       (RMSNorm, 6 passes -> 1)
  mul(x, sigmoid(x))
      -> torchlight::silu(x)                         (F.silu, 2 passes -> 1)
  cat([unsqueeze(sub(mul(x0, cos), mul(x1, sin)), -1),
       unsqueeze(add(mul(x0, sin), mul(x1, cos)), -1)], -1)
      with x0, x1 = select(pairs, -1, 0), select(pairs, -1, 1)
      -> torchlight::rope(pairs, cos, sin)           (rotary embedding, 10 calls -> 1)

Operands of each mul may come in either order, and x * x stands for
pow(x, 2). Only float32 chains whose inner results have no other user are
fused; anything else is left as it is."""

from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import statically_known_true

from torchlight.method_graph import MethodGraph

_aten = torch.ops.aten
_MUL = _aten.mul.Tensor


def _call(node, *targets) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and \
        node.target in targets


def _float32(node) -> Optional[torch.Tensor]:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) and val.dtype == torch.float32 else None


def _same(a, b) -> bool:
    """a == b for sizes that may be symbolic, proved without a guard: asking
    a dynamic dim `== 4` the ordinary way would specialise the program's
    input to that size."""
    return statically_known_true(a == b)


def _same_shape(a, b) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _only_user(node: torch.fx.Node, user: torch.fx.Node) -> bool:
    return list(node.users) == [user]


def _other(mul: torch.fx.Node, operand: torch.fx.Node):
    """The operand of a two-operand mul that is not `operand`, or None."""
    a, b = mul.args[0], mul.args[1]
    if a is operand:
        return b
    if b is operand:
        return a
    return None


def _square_of(node) -> Optional[torch.fx.Node]:
    """x when `node` is pow(x, 2) or mul(x, x)."""
    if _call(node, _aten.pow.Tensor_Scalar) and node.args[1] == 2:
        return node.args[0]
    if _call(node, _MUL) and len(node.args) == 2 and node.args[0] is node.args[1]:
        return node.args[0]
    return None


def _match_rms_norm(node: torch.fx.Node) -> Optional[Tuple]:
    """(x, weight, eps, the chain's inner nodes) when `node` is the final mul
    of an RMSNorm chain."""
    if not _call(node, _MUL) or len(node.args) != 2:
        return None
    for inner, weight in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        if not _call(inner, _MUL) or len(inner.args) != 2 or not _only_user(inner, node):
            continue
        for x, rsqrt in ((inner.args[0], inner.args[1]), (inner.args[1], inner.args[0])):
            eps = _match_rsqrt(rsqrt, x, inner)
            if eps is None:
                continue
            x_val, w_val = _float32(x), _float32(weight)
            if x_val is None or w_val is None or x_val.dim() < 1 or w_val.dim() != 1 or \
                    not _same(w_val.shape[0], x_val.shape[-1]) or _float32(node) is None or \
                    not _same_shape(_float32(node).shape, x_val.shape):
                continue
            add = rsqrt.args[0]
            mean = next(a for a in add.args if isinstance(a, torch.fx.Node))
            return x, weight, eps, [inner, rsqrt, add, mean, mean.args[0]]
    return None


def _match_rsqrt(rsqrt, x, user) -> Optional[float]:
    """eps when `rsqrt` is rsqrt(mean(x^2, [-1], keepdim=True) + eps), used
    only by `user`, with every inner result used once."""
    if not _call(rsqrt, _aten.rsqrt.default) or not _only_user(rsqrt, user):
        return None
    add = rsqrt.args[0]
    if not _call(add, _aten.add.Tensor, _aten.add.Scalar) or not _only_user(add, rsqrt) or \
            len(add.args) != 2 or add.kwargs.get("alpha", 1) != 1:
        return None
    mean, eps = add.args
    if isinstance(mean, (int, float)):
        mean, eps = eps, mean
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        return None
    if not _call(mean, _aten.mean.dim) or not _only_user(mean, add):
        return None
    x_val = _float32(x)
    dims = mean.args[1] if len(mean.args) > 1 else None
    keepdim = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
    if x_val is None or not keepdim or mean.kwargs.get("dtype") is not None or \
            dims is None or len(dims) != 1 or dims[0] not in (-1, x_val.dim() - 1):
        return None
    square = mean.args[0]
    if _square_of(square) is not x or not _only_user(square, mean):
        return None
    return float(eps)


def _match_silu(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    """x when `node` is mul(x, sigmoid(x)) (either order) on float32 x."""
    if not _call(node, _MUL) or len(node.args) != 2:
        return None
    for x, sigmoid in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        if _call(sigmoid, _aten.sigmoid.default) and sigmoid.args[0] is x and \
                _only_user(sigmoid, node) and _float32(x) is not None and \
                _float32(node) is not None and \
                _same_shape(_float32(node).shape, _float32(x).shape):
            return x
    return None


def _last_dim(node, value, rank: int) -> bool:
    return isinstance(value, int) and value in (-1, rank - 1)


def _products(node, target):
    """The two (a, b) operand pairs of `node` = target(mul(a, b), mul(c, d)),
    as ((a, b), (c, d)); None when it is not that shape (alpha 1 only)."""
    if not _call(node, target) or len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return None
    left, right = node.args
    if not (_call(left, _MUL) and _call(right, _MUL) and len(left.args) == 2 and
            len(right.args) == 2):
        return None
    return tuple(left.args), tuple(right.args)


def _product_is(pair, a, b) -> bool:
    return pair == (a, b) or pair == (b, a)


def _match_rope(node: torch.fx.Node) -> Optional[Tuple]:
    """(pairs, cos, sin, the chain's inner nodes) when `node` is the cat
    that ends an interleaved rotary embedding (module docstring)."""
    if not _call(node, _aten.cat.default) or len(node.args) < 2:
        return None
    parts, dim = node.args[0], node.args[1]
    out = _float32(node)
    if out is None or len(parts) != 2 or not _last_dim(node, dim, out.dim()):
        return None
    squeezed = []
    for part in parts:
        if not _call(part, _aten.unsqueeze.default) or not _only_user(part, node) or \
                not _last_dim(part, part.args[1], out.dim()):
            return None
        squeezed.append(part.args[0])
    real_out, imag_out = squeezed
    diff = _products(real_out, _aten.sub.Tensor)
    total = _products(imag_out, _aten.add.Tensor)
    if diff is None or total is None or not _only_user(real_out, parts[0]) or \
            not _only_user(imag_out, parts[1]):
        return None
    # Which operand of the first product is x0 = select(pairs, -1, 0).
    for x0, cos in (diff[0], diff[0][::-1]):
        if not _call(x0, _aten.select.int) or x0.args[2] != 0:
            continue
        pairs = x0.args[0]
        val = _float32(pairs)
        if val is None or val.dim() < 3 or not _same(val.shape[-1], 2) or \
                not _last_dim(x0, x0.args[1], val.dim()):
            continue
        x1 = next((a for a in diff[1] if _call(a, _aten.select.int) and a.args[0] is pairs and
                   a.args[2] == 1 and _last_dim(a, a.args[1], val.dim())), None)
        if x1 is None:
            continue
        sin = diff[1][1] if diff[1][0] is x1 else diff[1][0]
        if not (_product_is(total[0], x0, sin) and _product_is(total[1], x1, cos)) and \
                not (_product_is(total[1], x0, sin) and _product_is(total[0], x1, cos)):
            continue
        table = tuple(val.shape[-3:-1])
        if any(_float32(t) is None or not _same_shape(_float32(t).shape, table)
               for t in (cos, sin)):
            continue
        if not _same_shape(out.shape, val.shape):
            continue
        muls = [real_out.args[0], real_out.args[1], imag_out.args[0], imag_out.args[1]]
        if any(not _only_user(m, user) for m, user in zip(muls, [real_out, real_out, imag_out,
                                                                  imag_out])):
            continue
        if not set(x0.users) <= set(muls) or not set(x1.users) <= set(muls):
            continue
        return pairs, cos, sin, [*parts, real_out, imag_out, *muls, x0, x1]
    return None


def _replace(method: MethodGraph, node: torch.fx.Node, target, args) -> None:
    graph = method.graph
    with graph.inserting_before(node):
        fused = graph.call_function(target, args)
    fused.meta.update(node.meta)
    node.replace_all_uses_with(fused)
    graph.erase_node(node)


def _erase_unused(graph: torch.fx.Graph, nodes) -> None:
    for node in nodes:
        if isinstance(node, torch.fx.Node) and node.op == "call_function" and not node.users:
            graph.erase_node(node)


def fuse_llm_chains(method: MethodGraph) -> MethodGraph:
    """Replaces every matched RMSNorm chain by torchlight::rms_norm and every
    x * sigmoid(x) by torchlight::silu and every interleaved rotary
    embedding by torchlight::rope (see the module docstring); the
    replaced inner nodes are erased. Other nodes are left as they are."""
    import torchlight.kernels.fused_pointwise  # noqa: F401  (defines the operators)
    graph = method.graph
    fused_any = False
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        rms = _match_rms_norm(node)
        if rms is not None:
            x, weight, eps, chain = rms
            _replace(method, node, torch.ops.torchlight.rms_norm.default, (x, weight, eps))
            _erase_unused(graph, chain)
            fused_any = True
            continue
        rope = _match_rope(node)
        if rope is not None:
            pairs, cos, sin, chain = rope
            _replace(method, node, torch.ops.torchlight.rope.default, (pairs, cos, sin))
            _erase_unused(graph, chain)
            fused_any = True
            continue
        x = _match_silu(node)
        if x is not None:
            sigmoid = _other(node, x)
            _replace(method, node, torch.ops.torchlight.silu.default, (x,))
            _erase_unused(graph, [sigmoid])
            fused_any = True
    if fused_any:
        method.graph_module.recompile()
    return method
