"""Torchlight's fused int8 linears, for torch: the operators the
fuse_quantized_linears pass (torchlight/passes/fuse_quantized_linear.py)
writes, each with an eager reference equal to the decomposed graph it
replaces and a fake implementation for export. Kernels:
kernels/quantized/op_linear_int8.cpp, op_linear_4w.cpp and op_linear_qs8.cpp. (The 8da4w one,
torchlight::linear_8da4w, is defined in torchlight.kernels.quantized.)

    torchlight::linear_int8(Tensor input, Tensor weight, Tensor weight_scales,
                            Tensor? bias=None) -> Tensor
        input float32 [..., K]; weight int8 [N, K]; weight_scales float32 [N].
        = linear(input, dequantize_per_channel(weight, scales, zeros, axis 0)) + bias
        (int8 weight-only LLM linears)

    torchlight::linear_4w(Tensor input, Tensor weight, Tensor weight_scales, int group_size,
                          Tensor? bias=None) -> Tensor
        input float32 [..., K]; weight uint8 [N, K/2], two int4 values a byte packed as
        linear_8da4w's (value + 8, element 2j in the high nibble); weight_scales float32
        [N, K / group_size].
        = linear(input, dequantize_per_channel_group(unpacked weight, scales, None, -8, 7,
                 int8, group_size)) + bias   (4w: int4 weight-only LLM linears)

    torchlight::linear_qs8(Tensor input, float input_scale, int input_zero_point,
                           Tensor weight, Tensor weight_scales, Tensor? bias=None) -> Tensor
    torchlight::linear_qs8.Tensor(... Tensor input_scale, Tensor input_zero_point, ...)
        input int8 [..., K] quantized per tensor (scalars when static, one-element
        tensors from choose_qparams when dynamic); weight, weight_scales as above.
        = linear(dequantize_per_tensor(input, scale, zp), dequantize_per_channel(weight, ...))
        + bias (pt2e XNNPACKQuantizer linears run without a delegate)

Each has an .out overload (`*, Tensor(a!) out`; .Tensor_out for .Tensor)
that to_out_variants finds.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch.nn import functional as F

import torchlight.kernels.quantized  # noqa: F401  (quantized_decomposed out variants)
from torchlight.kernels.quantized import unpack_embedding_weight

NAMESPACE = "torchlight"
qd = torch.ops.quantized_decomposed

_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
_ARGS_INT8 = "Tensor input, Tensor weight, Tensor weight_scales, Tensor? bias=None"
_lib.define(f"linear_int8({_ARGS_INT8}) -> Tensor")
_lib.define(f"linear_int8.out({_ARGS_INT8}, {_OUT}")
_ARGS_4W = "Tensor input, Tensor weight, Tensor weight_scales, int group_size, " \
    "Tensor? bias=None"
_lib.define(f"linear_4w({_ARGS_4W}) -> Tensor")
_lib.define(f"linear_4w.out({_ARGS_4W}, {_OUT}")
_ARGS_QS8 = "Tensor input, float input_scale, int input_zero_point, " \
    "Tensor weight, Tensor weight_scales, Tensor? bias=None"
_ARGS_QS8_TENSOR = "Tensor input, Tensor input_scale, Tensor input_zero_point, " \
    "Tensor weight, Tensor weight_scales, Tensor? bias=None"
_lib.define(f"linear_qs8({_ARGS_QS8}) -> Tensor")
_lib.define(f"linear_qs8.out({_ARGS_QS8}, {_OUT}")
_lib.define(f"linear_qs8.Tensor({_ARGS_QS8_TENSOR}) -> Tensor")
_lib.define(f"linear_qs8.Tensor_out({_ARGS_QS8_TENSOR}, {_OUT}")


def _check(name: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"torchlight::{name}: {message}")


def _check_int8(input, weight, weight_scales, bias, name: str = "linear_int8") -> None:
    k = input.shape[-1]
    _check(name, weight.dim() == 2 and weight.dtype == torch.int8
           and weight.shape[1] == k,
           f"weight must be int8 [N, K] with K = {k}, got {weight.dtype} {list(weight.shape)}")
    _check(name, weight_scales.numel() == weight.shape[0],
           "weight_scales must have N elements")
    _check(name, bias is None or bias.numel() == weight.shape[0],
           "bias must have N elements")


def linear_int8_reference(input: torch.Tensor, weight: torch.Tensor,
                          weight_scales: torch.Tensor,
                          bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The decomposed int8 weight-only graph (dequantize, then linear)."""
    _check_int8(input, weight, weight_scales, bias)
    scales = weight_scales.reshape(-1)
    w = qd.dequantize_per_channel(weight, scales, torch.zeros(scales.shape, dtype=torch.int64),
                                  0, -128, 127, torch.int8, out_dtype=input.dtype)
    return F.linear(input, w, bias)


def _check_4w(input, weight, weight_scales, group_size, bias) -> None:
    k = input.shape[-1]
    _check("linear_4w", weight.dim() == 2 and weight.dtype == torch.uint8
           and weight.shape[1] * 2 == k,
           f"weight must be packed uint8 [N, K/2] with K = {k}, "
           f"got {weight.dtype} {list(weight.shape)}")
    _check("linear_4w", group_size >= 2 and group_size % 2 == 0 and k % group_size == 0,
           f"group_size {group_size} must be an even divisor of K = {k}")
    _check("linear_4w", weight_scales.numel() == weight.shape[0] * (k // group_size),
           "weight_scales must have N x K / group_size elements")
    _check("linear_4w", bias is None or bias.numel() == weight.shape[0],
           "bias must have N elements")


def linear_4w_reference(input: torch.Tensor, weight: torch.Tensor, weight_scales: torch.Tensor,
                        group_size: int, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The decomposed 4w graph on the unpacked weight (dequantize, then linear)."""
    _check_4w(input, weight, weight_scales, group_size, bias)
    values = unpack_embedding_weight(weight, 4)
    scales = weight_scales.reshape(weight.shape[0], -1)
    w = qd.dequantize_per_channel_group(values, scales, None, -8, 7, torch.int8, group_size,
                                        input.dtype)
    return F.linear(input, w, bias)


def linear_qs8_reference(input: torch.Tensor, input_scale, input_zero_point,
                         weight: torch.Tensor, weight_scales: torch.Tensor,
                         bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The decomposed pt2e graph (dequantize both, then linear)."""
    _check("linear_qs8", input.dtype == torch.int8, f"input must be int8, got {input.dtype}")
    if isinstance(input_scale, torch.Tensor):
        x = qd.dequantize_per_tensor.tensor(input, input_scale, input_zero_point,
                                            -128, 127, torch.int8)
    else:
        x = qd.dequantize_per_tensor(input, input_scale, input_zero_point, -128, 127, torch.int8)
    return linear_int8_reference(x, weight, weight_scales, bias)


def _out(reference):
    def eager_out(*args, out, **kwargs):
        result = reference(*args, **kwargs)
        out.resize_(result.shape)
        out.copy_(result)
        return out
    return eager_out


def _fake_like(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return input.new_empty((*input.shape[:-1], weight.shape[0]))


_lib.impl("linear_int8", linear_int8_reference, "CompositeExplicitAutograd")
_lib.impl("linear_int8.out", _out(linear_int8_reference), "CompositeExplicitAutograd")


_lib.impl("linear_4w", linear_4w_reference, "CompositeExplicitAutograd")
_lib.impl("linear_4w.out", _out(linear_4w_reference), "CompositeExplicitAutograd")


@torch.library.register_fake(f"{NAMESPACE}::linear_4w", lib=_lib)
def _fake_4w(input, weight, weight_scales, group_size, bias=None):
    _check_4w(input, weight, weight_scales, group_size, bias)
    return _fake_like(input, weight)


@torch.library.register_fake(f"{NAMESPACE}::linear_4w.out", lib=_lib)
def _fake_4w_out(input, weight, weight_scales, group_size, bias=None, *, out):
    return out


_lib.impl("linear_qs8", linear_qs8_reference, "CompositeExplicitAutograd")
_lib.impl("linear_qs8.out", _out(linear_qs8_reference), "CompositeExplicitAutograd")
_lib.impl("linear_qs8.Tensor", linear_qs8_reference, "CompositeExplicitAutograd")
_lib.impl("linear_qs8.Tensor_out", _out(linear_qs8_reference), "CompositeExplicitAutograd")


@torch.library.register_fake(f"{NAMESPACE}::linear_int8", lib=_lib)
def _fake_int8(input, weight, weight_scales, bias=None):
    _check_int8(input, weight, weight_scales, bias)
    return _fake_like(input, weight)


@torch.library.register_fake(f"{NAMESPACE}::linear_int8.out", lib=_lib)
def _fake_int8_out(input, weight, weight_scales, bias=None, *, out):
    return out


def _fake_qs8(input, input_scale, input_zero_point, weight, weight_scales, bias=None):
    _check("linear_qs8", input.dtype == torch.int8, f"input must be int8, got {input.dtype}")
    _check_int8(input, weight, weight_scales, bias, "linear_qs8")
    return input.new_empty((*input.shape[:-1], weight.shape[0]), dtype=torch.float32)


def _fake_qs8_out(input, input_scale, input_zero_point, weight, weight_scales, bias=None, *,
                  out):
    return out


for _name, _fake in [("linear_qs8", _fake_qs8), ("linear_qs8.Tensor", _fake_qs8),
                     ("linear_qs8.out", _fake_qs8_out), ("linear_qs8.Tensor_out", _fake_qs8_out)]:
    torch.library.register_fake(f"{NAMESPACE}::{_name}", _fake, lib=_lib)

linear_int8 = torch.ops.torchlight.linear_int8.default
linear_4w = torch.ops.torchlight.linear_4w.default
linear_qs8 = torch.ops.torchlight.linear_qs8
