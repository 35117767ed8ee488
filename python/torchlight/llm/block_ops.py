"""Two fused operators of a Llama block, for our layout's decode steps
(llama.py calls them when LlamaConfig.fuse_block_ops): each does in one
call what the block did in two, so a stories15m token runs 17 fewer small
operators (kernels: kernels/llm/op_add_rms_norm.cpp, op_swiglu.cpp).

    torchlight::add_rms_norm(Tensor input, Tensor residual, Tensor weight,
                             float eps) -> (Tensor sum, Tensor out)
        input, residual float32 [..., D] (the same shape); weight float32 [D].
        sum = input + residual                       (the residual stream)
        out = sum * rsqrt(mean(sum^2, -1, keepdim) + eps) * weight
        (the residual add and the RMSNorm after it, as torchlight::rms_norm)

    torchlight::swiglu(Tensor gate, Tensor? up=None) -> Tensor
        up given: gate, up float32 of one shape; = silu(gate) * up.
        up None: gate float32 [..., 2H], a fused w13's output holding the
        gate then the up halves; = silu(gate[..., :H]) * gate[..., H:], [..., H].
        (SwiGLU before its down projection: F.silu(w1 x) * w3 x)

Each result is what the two operators it replaces compute, rounding for
rounding: the sum is rounded before it is normed, silu's result before the
product. Each has an .out overload that to_out_variants finds
(add_rms_norm.out writes `sum` then `out`).
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch.nn import functional as F

from torchlight.kernels.fused_pointwise import rms_norm_reference

NAMESPACE = "torchlight"

_ADD_RMS_ARGS = "Tensor input, Tensor residual, Tensor weight, float eps"
_SWIGLU_ARGS = "Tensor gate, Tensor? up=None"

_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
_lib.define(f"add_rms_norm({_ADD_RMS_ARGS}) -> (Tensor, Tensor)")
_lib.define(f"add_rms_norm.out({_ADD_RMS_ARGS}, *, Tensor(a!) sum, Tensor(b!) out) -> "
            f"(Tensor(a!), Tensor(b!))")
_lib.define(f"swiglu({_SWIGLU_ARGS}) -> Tensor")
_lib.define(f"swiglu.out({_SWIGLU_ARGS}, *, Tensor(a!) out) -> Tensor(a!)")


def _check(name: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"torchlight::{name}: {message}")


def _check_add_rms_norm(input: torch.Tensor, residual: torch.Tensor,
                        weight: torch.Tensor) -> None:
    _check("add_rms_norm", all(t.dtype == torch.float32 for t in (input, residual, weight)),
           f"input, residual and weight must be float32, got {input.dtype}, {residual.dtype} "
           f"and {weight.dtype}")
    _check("add_rms_norm", tuple(input.shape) == tuple(residual.shape),
           f"residual must have input's shape {list(input.shape)}, got {list(residual.shape)}")
    _check("add_rms_norm", input.dim() >= 1 and weight.dim() == 1 and
           weight.shape[0] == input.shape[-1],
           f"weight must be [D] with D = input's last size, got input {list(input.shape)} and "
           f"weight {list(weight.shape)}")


def _swiglu_shape(gate: torch.Tensor, up: Optional[torch.Tensor]) -> list:
    """The result's shape; raises ValueError naming what breaks the schema."""
    _check("swiglu", gate.dtype == torch.float32 and (up is None or up.dtype == torch.float32),
           f"gate and up must be float32, got {gate.dtype} and "
           f"{None if up is None else up.dtype}")
    if up is not None:
        _check("swiglu", tuple(gate.shape) == tuple(up.shape),
               f"up must have gate's shape {list(gate.shape)}, got {list(up.shape)}")
        return list(gate.shape)
    _check("swiglu", gate.dim() >= 1 and gate.shape[-1] % 2 == 0,
           f"without up, gate must be [..., 2H] (gate then up halves), got {list(gate.shape)}")
    return list(gate.shape[:-1]) + [gate.shape[-1] // 2]


def add_rms_norm_reference(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                           eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """The add, then the decomposed RMSNorm chain (llama.RMSNorm's)."""
    _check_add_rms_norm(input, residual, weight)
    total = input + residual
    return total, rms_norm_reference(total, weight, eps)


def swiglu_reference(gate: torch.Tensor, up: Optional[torch.Tensor] = None) -> torch.Tensor:
    """F.silu, then the product (llama.FeedForward's)."""
    _swiglu_shape(gate, up)
    if up is None:
        gate, up = gate.chunk(2, dim=-1)
    return F.silu(gate) * up


def _add_rms_norm_out(input, residual, weight, eps, *, sum, out):
    results = add_rms_norm_reference(input, residual, weight, eps)
    for target, result in zip((sum, out), results):
        target.resize_(result.shape)
        target.copy_(result)
    return sum, out


def _swiglu_out(gate, up=None, *, out):
    result = swiglu_reference(gate, up)
    out.resize_(result.shape)
    out.copy_(result)
    return out


_lib.impl("add_rms_norm", add_rms_norm_reference, "CompositeExplicitAutograd")
_lib.impl("add_rms_norm.out", _add_rms_norm_out, "CompositeExplicitAutograd")
_lib.impl("swiglu", swiglu_reference, "CompositeExplicitAutograd")
_lib.impl("swiglu.out", _swiglu_out, "CompositeExplicitAutograd")


def _fake_add_rms_norm(input, residual, weight, eps):
    _check_add_rms_norm(input, residual, weight)
    return input.new_empty(input.shape), input.new_empty(input.shape)


def _fake_add_rms_norm_out(input, residual, weight, eps, *, sum, out):
    return sum, out


def _fake_swiglu(gate, up=None):
    return gate.new_empty(_swiglu_shape(gate, up))


def _fake_swiglu_out(gate, up=None, *, out):
    return out


for _name, _fake in [("add_rms_norm", _fake_add_rms_norm),
                     ("add_rms_norm.out", _fake_add_rms_norm_out),
                     ("swiglu", _fake_swiglu), ("swiglu.out", _fake_swiglu_out)]:
    torch.library.register_fake(f"{NAMESPACE}::{_name}", _fake, lib=_lib)

add_rms_norm = torch.ops.torchlight.add_rms_norm.default
swiglu = torch.ops.torchlight.swiglu.default
