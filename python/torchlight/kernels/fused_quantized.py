"""Torchlight's fused quantized linears, for torch: the operators the
fuse_quantized_linears pass (torchlight/passes/fuse_quantized_linears.py)
writes, with eager reference implementations equal to the decomposed graphs
they replace and fake implementations for export. Their kernels are in
kernels/quantized (op_linear_8da4w.cpp, op_linear_int8.cpp).

    torchlight::linear_8da4w(Tensor input, Tensor weight, Tensor weight_scales,
                             int group_size, Tensor? bias=None) -> Tensor
        input float32 [..., K]; weight uint8 [N, K / 2], int4 values packed two a
        byte (value + 8, element 2j in the high nibble, as embedding_4bit packs);
        weight_scales float32 [N, K / group_size] (symmetric, no zero points).
        = linear(dequantize_per_token(quantize_per_token(input, per-token
          asymmetric int8 qparams)), dequantize_per_channel_group(weight)) + bias
    torchlight::linear_int8(Tensor input, Tensor weight, Tensor weight_scales,
                            Tensor? bias=None) -> Tensor
        input float32 [..., K]; weight int8 [N, K]; weight_scales float32 [N].
        = linear(input, dequantize_per_channel(weight, scales, zeros, axis 0)) + bias

Each has an .out overload (`*, Tensor(a!) out`) that to_out_variants finds.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch.nn import functional as F

import torchlight.kernels.quantized  # noqa: F401  (quantized_decomposed out variants)

NAMESPACE = "torchlight"
qd = torch.ops.quantized_decomposed

_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
_ARGS_8DA4W = "Tensor input, Tensor weight, Tensor weight_scales, int group_size, Tensor? bias=None"
_ARGS_INT8 = "Tensor input, Tensor weight, Tensor weight_scales, Tensor? bias=None"
_lib.define(f"linear_8da4w({_ARGS_8DA4W}) -> Tensor")
_lib.define(f"linear_8da4w.out({_ARGS_8DA4W}, {_OUT}")
_lib.define(f"linear_int8({_ARGS_INT8}) -> Tensor")
_lib.define(f"linear_int8.out({_ARGS_INT8}, {_OUT}")


def pack_int4(values: torch.Tensor) -> torch.Tensor:
    """int8 [N, K] in -8..7 -> uint8 [N, K / 2]: element 2j in the high nibble
    of byte j, 2j + 1 in the low, each stored + 8."""
    shifted = (values.to(torch.int16) + 8).reshape(values.shape[0], -1, 2)
    return ((shifted[..., 0] << 4) | shifted[..., 1]).to(torch.uint8)


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """The inverse of pack_int4: uint8 [N, K / 2] -> int8 [N, K] in -8..7."""
    p = packed.to(torch.int16)
    pairs = torch.stack(((p >> 4) & 15, p & 15), dim=-1) - 8
    return pairs.reshape(packed.shape[0], -1).to(torch.int8)


def _check(name: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"torchlight::{name}: {message}")


def _check_8da4w(input, weight, weight_scales, group_size, bias) -> None:
    k = input.shape[-1]
    _check("linear_8da4w", weight.dim() == 2 and weight.dtype == torch.uint8
           and weight.shape[1] * 2 == k,
           f"weight must be uint8 [N, K / 2] with K = {k}, got {weight.dtype} "
           f"{list(weight.shape)}")
    _check("linear_8da4w", group_size >= 2 and group_size % 2 == 0 and k % group_size == 0,
           f"group_size {group_size} must be an even divisor of K = {k}")
    _check("linear_8da4w", weight_scales.numel() == weight.shape[0] * (k // group_size),
           f"weight_scales must have N x K / group_size elements, got "
           f"{list(weight_scales.shape)}")
    _check("linear_8da4w", bias is None or bias.numel() == weight.shape[0],
           "bias must have N elements")


def _check_int8(input, weight, weight_scales, bias) -> None:
    k = input.shape[-1]
    _check("linear_int8", weight.dim() == 2 and weight.dtype == torch.int8
           and weight.shape[1] == k,
           f"weight must be int8 [N, K] with K = {k}, got {weight.dtype} {list(weight.shape)}")
    _check("linear_int8", weight_scales.numel() == weight.shape[0],
           "weight_scales must have N elements")
    _check("linear_int8", bias is None or bias.numel() == weight.shape[0],
           "bias must have N elements")


def linear_8da4w_reference(input: torch.Tensor, weight: torch.Tensor,
                           weight_scales: torch.Tensor, group_size: int,
                           bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The decomposed 8da4w graph on the packed weight (torchao's math)."""
    _check_8da4w(input, weight, weight_scales, group_size, bias)
    scales, zero_points = qd.choose_qparams_per_token_asymmetric(input, torch.int8)
    xq = qd.quantize_per_token(input, scales, zero_points, -128, 127, torch.int8)
    xdq = qd.dequantize_per_token(xq, scales, zero_points, -128, 127, torch.int8, input.dtype)
    scales2d = weight_scales.reshape(weight.shape[0], -1)
    w = qd.dequantize_per_channel_group(unpack_int4(weight), scales2d,
                                        torch.zeros_like(scales2d), -8, 7, torch.int8,
                                        group_size, input.dtype)
    return F.linear(xdq, w, bias)


def linear_int8_reference(input: torch.Tensor, weight: torch.Tensor,
                          weight_scales: torch.Tensor,
                          bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The decomposed int8 weight-only graph (dequantize, then linear)."""
    _check_int8(input, weight, weight_scales, bias)
    scales = weight_scales.reshape(-1)
    w = qd.dequantize_per_channel(weight, scales, torch.zeros(scales.shape, dtype=torch.int64),
                                  0, -128, 127, torch.int8, out_dtype=input.dtype)
    return F.linear(input, w, bias)


def _out(reference):
    def eager_out(*args, out, **kwargs):
        result = reference(*args, **kwargs)
        out.resize_(result.shape)
        out.copy_(result)
        return out
    return eager_out


def _fake_like(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return input.new_empty((*input.shape[:-1], weight.shape[0]))


_lib.impl("linear_8da4w", linear_8da4w_reference, "CompositeExplicitAutograd")
_lib.impl("linear_8da4w.out", _out(linear_8da4w_reference), "CompositeExplicitAutograd")
_lib.impl("linear_int8", linear_int8_reference, "CompositeExplicitAutograd")
_lib.impl("linear_int8.out", _out(linear_int8_reference), "CompositeExplicitAutograd")


@torch.library.register_fake(f"{NAMESPACE}::linear_8da4w", lib=_lib)
def _fake_8da4w(input, weight, weight_scales, group_size, bias=None):
    _check_8da4w(input, weight, weight_scales, group_size, bias)
    return _fake_like(input, weight)


@torch.library.register_fake(f"{NAMESPACE}::linear_8da4w.out", lib=_lib)
def _fake_8da4w_out(input, weight, weight_scales, group_size, bias=None, *, out):
    return out


@torch.library.register_fake(f"{NAMESPACE}::linear_int8", lib=_lib)
def _fake_int8(input, weight, weight_scales, bias=None):
    _check_int8(input, weight, weight_scales, bias)
    return _fake_like(input, weight)


@torch.library.register_fake(f"{NAMESPACE}::linear_int8.out", lib=_lib)
def _fake_int8_out(input, weight, weight_scales, bias=None, *, out):
    return out


linear_8da4w = torch.ops.torchlight.linear_8da4w.default
linear_int8 = torch.ops.torchlight.linear_int8.default
