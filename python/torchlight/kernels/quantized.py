"""The quantized operator library's schemas: importing this module registers
them with torch, as importing upstream's `executorch.kernels.quantized` does.

    import torchlight.kernels.quantized  # noqa: F401

Afterwards the graph of PyTorch's pt2e flow (convert_pt2e) and of the LLM
source transforms (torchlight.llm.quantize) lowers without a delegate: every
`quantized_decomposed::*` operator has its out= overload, with upstream
ExecuTorch 0.5's names and schemas (kernels/quantized/quantized.yaml), so
to_out_variants finds it and the program names it as upstream's runtime does.

Registered here:
  * out variants of the operators torch defines (torch.ao.quantization.fx._decomposed):
    quantize_per_tensor.out / .Tensor_out, dequantize_per_tensor.out / .Tensor_out,
    quantize_per_channel.out, dequantize_per_channel.out, choose_qparams.Tensor_out,
    choose_qparams_per_token_asymmetric.out, quantize_per_token.out,
    dequantize_per_token.out;
  * the operators upstream's exporter defines itself, functional and out
    (exir/passes/_quant_patterns_and_replacements.py): embedding_byte,
    embedding_2bit, embedding_4bit (each also .dtype), mixed_mm, mixed_linear, add;
  * one operator upstream has no out variant for, so 8da4w and 4-bit
    weight-only linears can run on kernels without a delegate (torchlight's
    extension, same naming rule): dequantize_per_channel_group.out.

Each out overload's eager kernel computes the functional operator and copies
the result into its out tensors, so a lowered graph still runs in Python.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import torch
from torch.ao.quantization.fx._decomposed import quantized_decomposed_lib as _lib
from torch.library import impl

NAMESPACE = "quantized_decomposed"

# --- Operators upstream's exporter defines (functional forms) -----------------------

_EMBEDDING_ARGS = ("Tensor weight, Tensor weight_scales, Tensor? weight_zero_points, "
                   "int weight_quant_min, int weight_quant_max, Tensor indices")

_FUNCTIONAL_SCHEMAS = [
    f"embedding_byte({_EMBEDDING_ARGS}) -> Tensor",
    f"embedding_byte.dtype({_EMBEDDING_ARGS}, *, ScalarType? dtype=None) -> Tensor",
    f"embedding_2bit({_EMBEDDING_ARGS}) -> Tensor",
    f"embedding_2bit.dtype({_EMBEDDING_ARGS}, *, ScalarType? dtype=None) -> Tensor",
    f"embedding_4bit({_EMBEDDING_ARGS}) -> Tensor",
    f"embedding_4bit.dtype({_EMBEDDING_ARGS}, *, ScalarType? dtype=None) -> Tensor",
    "mixed_mm(Tensor input, Tensor weight, Tensor weight_scales, Tensor? weight_zero_points) "
    "-> Tensor",
    "mixed_linear(Tensor input, Tensor weight, Tensor weight_scales, "
    "Tensor? weight_zero_points, ScalarType? dtype=None) -> Tensor",
    "add(Tensor a, float a_scale, int a_zero_point, int a_quant_min, int a_quant_max, "
    "Tensor b, float b_scale, int b_zero_point, int b_quant_min, int b_quant_max, "
    "float out_scale, int out_zero_point, int out_quant_min, int out_quant_max) -> Tensor",
]

# --- Out variants: (functional overload, out schema), upstream's text ----------------

_OUT = "Tensor(a!) out) -> Tensor(a!)"
_OUT_SCHEMAS = [
    ("quantize_per_tensor.default",
     "quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, "
     f"int quant_max, ScalarType dtype, *, {_OUT}"),
    ("quantize_per_tensor.tensor",
     "quantize_per_tensor.Tensor_out(Tensor input, Tensor scale, Tensor zero_point, "
     f"int quant_min, int quant_max, ScalarType dtype, *, {_OUT}"),
    ("dequantize_per_tensor.default",
     "dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, "
     f"int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, {_OUT}"),
    ("dequantize_per_tensor.tensor",
     "dequantize_per_tensor.Tensor_out(Tensor input, Tensor scale, Tensor zero_point, "
     f"int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, {_OUT}"),
    ("quantize_per_channel.default",
     "quantize_per_channel.out(Tensor input, Tensor scales, Tensor zero_points, int axis, "
     f"int quant_min, int quant_max, ScalarType dtype, *, {_OUT}"),
    ("dequantize_per_channel.default",
     "dequantize_per_channel.out(Tensor input, Tensor scales, Tensor? zero_points, int axis, "
     f"int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, {_OUT}"),
    ("choose_qparams.tensor",
     "choose_qparams.Tensor_out(Tensor input, int quant_min, int quant_max, float eps, "
     "ScalarType dtype, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out) "
     "-> (Tensor(a!), Tensor(b!))"),
    ("choose_qparams_per_token_asymmetric.default",
     "choose_qparams_per_token_asymmetric.out(Tensor input, ScalarType dtype, *, "
     "Tensor(a!) scale_out, Tensor(b!) zero_point_out) -> (Tensor(a!), Tensor(b!))"),
    ("quantize_per_token.default",
     "quantize_per_token.out(Tensor input, Tensor scales, Tensor zero_points, int quant_min, "
     f"int quant_max, ScalarType dtype, *, {_OUT}"),
    ("dequantize_per_token.default",
     "dequantize_per_token.out(Tensor input, Tensor scales, Tensor zero_points, int quant_min, "
     f"int quant_max, ScalarType dtype, ScalarType output_dtype, *, {_OUT}"),
    ("embedding_byte.default", f"embedding_byte.out({_EMBEDDING_ARGS}, *, {_OUT}"),
    ("embedding_byte.dtype",
     f"embedding_byte.dtype_out({_EMBEDDING_ARGS}, *, ScalarType? dtype=None, {_OUT}"),
    ("embedding_2bit.default", f"embedding_2bit.out({_EMBEDDING_ARGS}, *, {_OUT}"),
    ("embedding_2bit.dtype",
     f"embedding_2bit.dtype_out({_EMBEDDING_ARGS}, *, ScalarType? dtype=None, {_OUT}"),
    ("embedding_4bit.default", f"embedding_4bit.out({_EMBEDDING_ARGS}, *, {_OUT}"),
    # Upstream's yaml has dtype before the `*` here (unlike the byte and 2-bit forms).
    ("embedding_4bit.dtype",
     f"embedding_4bit.dtype_out({_EMBEDDING_ARGS}, ScalarType? dtype=None, *, {_OUT}"),
    ("mixed_mm.default",
     "mixed_mm.out(Tensor input, Tensor weight, Tensor weight_scales, "
     f"Tensor? weight_zero_points, *, {_OUT}"),
    ("mixed_linear.default",
     "mixed_linear.out(Tensor input, Tensor weight, Tensor weight_scales, "
     f"Tensor? weight_zero_points, ScalarType? dtype=None, *, {_OUT}"),
    ("add.default",
     "add.out(Tensor a, float a_scale, int a_zero_point, int a_quant_min, int a_quant_max, "
     "Tensor b, float b_scale, int b_zero_point, int b_quant_min, int b_quant_max, "
     "float out_scale, int out_zero_point, int out_quant_min, int out_quant_max, *, "
     f"{_OUT}"),
    # torchlight's: upstream defines no out variant for the group-wise dequantize.
    ("dequantize_per_channel_group.default",
     "dequantize_per_channel_group.out(Tensor input, Tensor scales, Tensor? zero_points, "
     "int quant_min, int quant_max, ScalarType dtype, int group_size, "
     f"ScalarType output_dtype, *, {_OUT}"),
]


def _op(qualified: str):
    packet, overload = qualified.split(".")
    return getattr(getattr(getattr(torch.ops, NAMESPACE), packet), overload)


def _already_defined(schema: str) -> bool:
    name = schema.split("(", 1)[0]
    packet, _, overload = name.partition(".")
    ns = getattr(torch.ops, NAMESPACE)
    try:
        return (overload or "default") in getattr(ns, packet).overloads()
    except AttributeError:
        return False


# --- Eager kernels of the functional operators ----------------------------------------


def _check_embedding(weight, scales, zero_points, name: str) -> None:
    if weight.dim() != 2 or weight.dtype not in (torch.int8, torch.uint8):
        raise ValueError(f"{name}: weight must be a 2-D int8/uint8 tensor, got "
                         f"{weight.dtype} {tuple(weight.shape)}")
    if scales.dim() not in (1, 2) or scales.shape[0] != weight.shape[0]:
        raise ValueError(f"{name}: weight_scales must be [rows] or [rows, groups] with "
                         f"rows = {weight.shape[0]}, got {tuple(scales.shape)}")
    if zero_points is not None and zero_points.shape != scales.shape:
        raise ValueError(f"{name}: weight_zero_points must have weight_scales' shape "
                         f"{tuple(scales.shape)}, got {tuple(zero_points.shape)}")


def unpack_embedding_weight(packed: torch.Tensor, bits: int) -> torch.Tensor:
    """int8 values [rows, cols * 8 / bits] from upstream's packed uint8 layout:
    4-bit puts element 2i in the high nibble and 2i+1 in the low one, 2-bit
    puts element 4i+j in bits 2j..2j+1; each stored with an offset of
    2^(bits-1) (so -8..7 is stored as 0..15)."""
    if bits == 8:
        return packed
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    u = packed.to(torch.int16)
    if bits == 4:
        parts = [(u >> 4) & mask, u & mask]
    else:
        parts = [(u >> (bits * j)) & mask for j in range(per_byte)]
    values = torch.stack(parts, dim=-1).reshape(packed.shape[0], -1)
    return (values - (1 << (bits - 1))).to(torch.int8)


def _embedding(bits: int, weight, scales, zero_points, quant_min, quant_max, indices,
               dtype: Optional[torch.dtype]):
    _check_embedding(weight, scales, zero_points, f"embedding_{bits}bit")
    values = unpack_embedding_weight(weight, bits).to(torch.float32)
    groups = scales.shape[1] if scales.dim() == 2 else 1
    rows, cols = values.shape
    grouped = values.reshape(rows, groups, cols // groups)
    if zero_points is not None:
        grouped = grouped - zero_points.reshape(rows, groups, 1).to(torch.float32)
    table = (grouped * scales.reshape(rows, groups, 1).to(torch.float32)).reshape(rows, cols)
    return torch.nn.functional.embedding(indices, table).to(dtype or scales.dtype)


def _define_functional() -> None:
    for schema in _FUNCTIONAL_SCHEMAS:
        if not _already_defined(schema):
            _lib.define(schema)

    for bits, packet in ((8, "embedding_byte"), (2, "embedding_2bit"), (4, "embedding_4bit")):
        def plain(w, s, zp, qmin, qmax, idx, _bits=bits):
            return _embedding(_bits, w, s, zp, qmin, qmax, idx, None)

        def with_dtype(w, s, zp, qmin, qmax, idx, *, dtype=None, _bits=bits):
            return _embedding(_bits, w, s, zp, qmin, qmax, idx, dtype)

        impl(_lib, packet, "CompositeExplicitAutograd")(plain)
        impl(_lib, f"{packet}.dtype", "CompositeExplicitAutograd")(with_dtype)

    @impl(_lib, "mixed_mm", "CompositeExplicitAutograd")
    def mixed_mm(x, weight, scales, zero_points):
        # weight [K, N] int8 with one scale per row k (upstream's kernel).
        w = weight.to(x.dtype)
        if zero_points is not None:
            w = w - zero_points.reshape(-1, 1).to(x.dtype)
        return x @ (w * scales.reshape(-1, 1).to(x.dtype))

    @impl(_lib, "mixed_linear", "CompositeExplicitAutograd")
    def mixed_linear(x, weight, scales, zero_points, dtype=None):
        # weight [N, K] int8, scales [N] or [N, K / group].
        groups = scales.shape[1] if scales.dim() == 2 else 1
        n, k = weight.shape
        w = weight.to(torch.float32).reshape(n, groups, -1)
        if zero_points is not None:
            w = w - zero_points.reshape(n, groups, 1).to(torch.float32)
        w = (w * scales.reshape(n, groups, 1).to(torch.float32)).reshape(n, k)
        return (x.to(torch.float32) @ w.t()).to(dtype or x.dtype)

    @impl(_lib, "add", "CompositeExplicitAutograd")
    def add(a, a_scale, a_zp, a_min, a_max, b, b_scale, b_zp, b_min, b_max,
            out_scale, out_zp, out_min, out_max):
        total = (a.to(torch.float32) - a_zp) * a_scale + (b.to(torch.float32) - b_zp) * b_scale
        q = torch.round(total / out_scale) + out_zp
        return q.clamp(out_min, out_max).to(a.dtype)


# --- Out variants ---------------------------------------------------------------------


def _make_out_kernel(functional, out_op):
    """An eager kernel for `out_op`: binds its arguments by name, calls
    `functional` with them, copies each result into its out tensor."""
    fn_args = functional._schema.arguments
    out_names = [a.name for a in out_op._schema.arguments if a.is_out]
    defaults = {a.name: a.default_value for a in out_op._schema.arguments
                if a.has_default_value()}

    def kernel(*args, **kwargs):
        values: Dict[str, object] = dict(defaults)
        positional = [a.name for a in out_op._schema.arguments
                      if not a.is_out and not a.kwarg_only]
        values.update(zip(positional, args))
        values.update(kwargs)
        call_args: List[object] = []
        call_kwargs: Dict[str, object] = {}
        for a in fn_args:
            if a.name not in values:
                continue
            if a.kwarg_only:
                call_kwargs[a.name] = values[a.name]
            else:
                call_args.append(values[a.name])
        results = functional(*call_args, **call_kwargs)
        if isinstance(results, torch.Tensor):
            results = (results,)
        outs = [values[n] for n in out_names]
        for out, result in zip(outs, results):
            out.resize_(result.shape)
            out.copy_(result)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return kernel


def _define_out_variants() -> None:
    for functional_name, schema in _OUT_SCHEMAS:
        if _already_defined(schema):
            continue
        _lib.define(schema)
        out_name = schema.split("(", 1)[0]
        out_op = _op(out_name)
        kernel = _make_out_kernel(_op(functional_name), out_op)
        _lib.impl(out_name, kernel, "CompositeExplicitAutograd")


def out_variant_names() -> List[str]:
    """"quantized_decomposed::<op>.<overload>" of every out variant registered here."""
    return [f"{NAMESPACE}::{schema.split('(', 1)[0]}" for _, schema in _OUT_SCHEMAS]


_define_functional()
_define_out_variants()


# --- torchlight::linear_8da4w: the fused 8da4w linear the exporter emits -------------------
#
# passes/fuse_quantized_linear.py replaces torchao's decomposed 8da4w graph
# (per-token q/dq of x, dequantize_per_channel_group of a constant weight,
# linear) by this operator when the program targets torchlight's kernels
# (kernels/quantized/op_linear_8da4w.cpp). weight: uint8 [N, K/2], two int4
# values a byte (value + 8, element 2j in the high nibble, as embedding_4bit
# packs); weight_scales float32 [N, K / group_size]; symmetric.

LINEAR_8DA4W_SCHEMA = ("linear_8da4w(Tensor input, Tensor weight, Tensor weight_scales, "
                       "int group_size, Tensor? bias=None) -> Tensor")
LINEAR_8DA4W_OUT_SCHEMA = ("linear_8da4w.out(Tensor input, Tensor weight, Tensor weight_scales, "
                           "int group_size, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)")

_torchlight_lib = torch.library.Library("torchlight", "FRAGMENT")


def _linear_8da4w(x, weight, scales, group_size, bias=None):
    """The decomposed 8da4w graph on the unpacked weight (its definition)."""
    values = unpack_embedding_weight(weight, 4)
    s, zp = torch.ops.quantized_decomposed.choose_qparams_per_token_asymmetric(x, torch.int8)
    xq = torch.ops.quantized_decomposed.quantize_per_token(x, s, zp, -128, 127, torch.int8)
    xdq = torch.ops.quantized_decomposed.dequantize_per_token(xq, s, zp, -128, 127, torch.int8,
                                                              x.dtype)
    w = torch.ops.quantized_decomposed.dequantize_per_channel_group(
        values, scales, None, -8, 7, torch.int8, group_size, x.dtype)
    return torch.nn.functional.linear(xdq, w, bias)


def _define_linear_8da4w() -> None:
    ns = torch.ops.torchlight
    try:
        if "default" in ns.linear_8da4w.overloads():
            return
    except AttributeError:
        pass
    _torchlight_lib.define(LINEAR_8DA4W_SCHEMA)
    _torchlight_lib.define(LINEAR_8DA4W_OUT_SCHEMA)
    _torchlight_lib.impl("linear_8da4w", _linear_8da4w, "CompositeExplicitAutograd")
    _torchlight_lib.impl("linear_8da4w.out",
                         _make_out_kernel(ns.linear_8da4w.default, ns.linear_8da4w.out),
                         "CompositeExplicitAutograd")


_define_linear_8da4w()
