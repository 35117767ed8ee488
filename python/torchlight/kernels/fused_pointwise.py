"""Torchlight's fused pointwise LLM operators, for torch: what the
fuse_llm_chains pass (torchlight/passes/fuse_llm_chains.py) writes in place
of the decomposed chains torch.export leaves, each with an eager reference
equal to the chain it replaces and a fake implementation for export.
Kernels: kernels/llm/op_rms_norm.cpp, op_silu.cpp and op_rope.cpp.

    torchlight::rms_norm(Tensor input, Tensor weight, float eps) -> Tensor
        input float32 [..., D]; weight float32 [D].
        = input * rsqrt(mean(input^2, dim=-1, keepdim=True) + eps) * weight
        (Llama's RMSNorm, exported as pow, mean, add, rsqrt, mul, mul)

    torchlight::silu(Tensor input) -> Tensor
        input float32, any shape. = input * sigmoid(input)
        (F.silu, which the core ATen decomposition turns into sigmoid and mul)

    torchlight::rope(Tensor pairs, Tensor cos, Tensor sin) -> Tensor
        pairs float32 [..., T, P, 2] (interleaved (x0, x1) pairs of each head);
        cos, sin float32 [T, P].
        = stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        (Llama's rotary embedding, exported as select, mul, sub, add, cat)

Each has an .out overload (`*, Tensor(a!) out`) that to_out_variants finds.
"""

from __future__ import annotations

import torch

NAMESPACE = "torchlight"

_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
_ARGS_RMS = "Tensor input, Tensor weight, float eps"
_lib.define(f"rms_norm({_ARGS_RMS}) -> Tensor")
_lib.define(f"rms_norm.out({_ARGS_RMS}, {_OUT}")
_lib.define("silu(Tensor input) -> Tensor")
_ARGS_ROPE = "Tensor pairs, Tensor cos, Tensor sin"
_lib.define(f"rope({_ARGS_ROPE}) -> Tensor")
_lib.define(f"rope.out({_ARGS_ROPE}, {_OUT}")
_lib.define(f"silu.out(Tensor input, {_OUT}")


def _check(name: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"torchlight::{name}: {message}")


def _check_rms(input: torch.Tensor, weight: torch.Tensor) -> None:
    _check("rms_norm", input.dtype == torch.float32 and weight.dtype == torch.float32,
           f"input and weight must be float32, got {input.dtype} and {weight.dtype}")
    _check("rms_norm", input.dim() >= 1 and weight.dim() == 1 and
           weight.shape[0] == input.shape[-1],
           f"weight must be [D] with D = input's last size, got input {list(input.shape)} and "
           f"weight {list(weight.shape)}")


def rms_norm_reference(input: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """The decomposed chain, operator for operator."""
    _check_rms(input, weight)
    return input * torch.rsqrt(input.pow(2).mean(-1, keepdim=True) + eps) * weight


def silu_reference(input: torch.Tensor) -> torch.Tensor:
    """The decomposed chain: sigmoid, then mul."""
    _check("silu", input.dtype == torch.float32, f"input must be float32, got {input.dtype}")
    return input * torch.sigmoid(input)


def _check_rope(pairs: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> None:
    _check("rope", all(t.dtype == torch.float32 for t in (pairs, cos, sin)),
           "pairs, cos and sin must be float32")
    _check("rope", pairs.dim() >= 3 and pairs.shape[-1] == 2,
           f"pairs must be [..., T, P, 2], got {list(pairs.shape)}")
    for name, t in (("cos", cos), ("sin", sin)):
        _check("rope", tuple(t.shape) == tuple(pairs.shape[-3:-1]),
               f"{name} must be [T, P] = {list(pairs.shape[-3:-1])}, got {list(t.shape)}")


def rope_reference(pairs: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """The decomposed chain (torchlight.llm.llama.apply_rope's arithmetic)."""
    _check_rope(pairs, cos, sin)
    real, imag = pairs[..., 0], pairs[..., 1]
    return torch.stack((real * cos - imag * sin, real * sin + imag * cos), dim=-1)


def _out(reference):
    def eager_out(*args, out, **kwargs):
        result = reference(*args, **kwargs)
        out.resize_(result.shape)
        out.copy_(result)
        return out
    return eager_out


_lib.impl("rms_norm", rms_norm_reference, "CompositeExplicitAutograd")
_lib.impl("rms_norm.out", _out(rms_norm_reference), "CompositeExplicitAutograd")
_lib.impl("silu", silu_reference, "CompositeExplicitAutograd")
_lib.impl("silu.out", _out(silu_reference), "CompositeExplicitAutograd")
_lib.impl("rope", rope_reference, "CompositeExplicitAutograd")
_lib.impl("rope.out", _out(rope_reference), "CompositeExplicitAutograd")


def _fake_rms(input, weight, eps):
    _check_rms(input, weight)
    return input.new_empty(input.shape)


def _fake_rms_out(input, weight, eps, *, out):
    return out


def _fake_silu(input):
    _check("silu", input.dtype == torch.float32, f"input must be float32, got {input.dtype}")
    return input.new_empty(input.shape)


def _fake_silu_out(input, *, out):
    return out


def _fake_rope(pairs, cos, sin):
    _check_rope(pairs, cos, sin)
    return pairs.new_empty(pairs.shape)


def _fake_rope_out(pairs, cos, sin, *, out):
    return out


for _name, _fake in [("rope", _fake_rope), ("rope.out", _fake_rope_out),("rms_norm", _fake_rms), ("rms_norm.out", _fake_rms_out),
                     ("silu", _fake_silu), ("silu.out", _fake_silu_out)]:
    torch.library.register_fake(f"{NAMESPACE}::{_name}", _fake, lib=_lib)

rms_norm = torch.ops.torchlight.rms_norm.default
silu = torch.ops.torchlight.silu.default
rope = torch.ops.torchlight.rope.default
