"""The quantized kernel library (kernels/quantized) against PyTorch.

Expected values come from torch.ao.quantization.fx._decomposed, the
functional quantized_decomposed operators, or (for the operators torch does
not define: the embeddings, mixed_mm/mixed_linear, add) from references
written here with the same torch arithmetic exir's definitions use. Results
must match bit for bit, except the matmul-shaped ops (mixed_mm, mixed_linear,
linear_8da4w), which sum in another order and have tolerances. torch
2.6 has no out variants of these operators, so their schemas are read from
kernels/schemas/extra_schemas.txt and defined here (schema only) for the
harness to bind arguments by name.
"""

import math
import os

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 - defines quantized_decomposed
from torch.library import Library

from conformance.spec import Case, T

_EXTRA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "schemas",
                      "extra_schemas.txt")
_LIBS = {}
_OPS = ("quantized_decomposed::", "torchlight::linear_8da4w.", "torchlight::linear_int8.",
        "torchlight::linear_4w.", "torchlight::linear_qs8.")


def _define_out_schemas():
    with open(_EXTRA) as f:
        for line in f:
            line = line.strip()
            if not line.startswith(_OPS):
                continue
            ns, schema = line.split("::", 1)
            name, _, overload = schema.split("(", 1)[0].partition(".")
            packet = getattr(getattr(torch.ops, ns), name, None)
            if packet is not None and overload in packet.overloads():
                continue  # Defined already (another library imported in this process).
            if ns not in _LIBS:
                _LIBS[ns] = Library(ns, "FRAGMENT")
            _LIBS[ns].define(schema)


_define_out_schemas()
Q = "quantized_decomposed::"
NAN, INF = float("nan"), float("inf")
# (dtype, quant_min, quant_max, a zero point inside)
QTYPES = [(torch.uint8, 0, 255, 128), (torch.int8, -128, 127, 3),
          (torch.int16, -32768, 32767, -17), (torch.int32, -2**31, 2**31 - 1, 1000)]
FLOAT_INPUTS = [torch.float32, torch.float16, torch.bfloat16]
CASES = []


def add(op, args, **kw):
    # Bit-exact unless a case says otherwise: the kernels round every step
    # as torch does (only the matmul-shaped ops sum in another order).
    kw.setdefault("rtol", 0.0)
    kw.setdefault("atol", 0.0)
    CASES.append(Case(Q + op, args, **kw))


def one(value, dtype):
    return T((1,), dtype, values=[value])


# --- quantize_per_tensor.out / .Tensor_out
for in_dt in FLOAT_INPUTS:
    for q_dt, lo, hi, zp in QTYPES:
        add("quantize_per_tensor.out", [T((3, 5), in_dt, low=-4, high=4), 0.03, zp, lo, hi, q_dt])
# Ties: x / 0.5 = k + 0.5 rounds half to even.
TIES = [k * 0.25 for k in range(-13, 14)]
for q_dt, lo, hi, zp in QTYPES:
    add("quantize_per_tensor.out", [T((27,), torch.float32, values=TIES), 0.5, 0, lo, hi, q_dt],
        name=f"ties,{q_dt}")
# NaN (-> 0, as torch's float->int conversion gives for 8/16-bit dtypes), infinities, huge values.
SPECIAL = [NAN, INF, -INF, 1e30, -1e30, 0.0, 2.5, -0.0]
for q_dt, lo, hi, zp in QTYPES[:3]:
    for in_dt in FLOAT_INPUTS:
        add("quantize_per_tensor.out", [T((8,), in_dt, values=SPECIAL), 0.1, zp, lo, hi, q_dt],
            name=f"nan_inf,{in_dt},{q_dt}")
add("quantize_per_tensor.out", [T((2, 3, 5, 7), torch.float32), 0.011, -8, -8, 7, torch.int8],
    name="int4_range")
add("quantize_per_tensor.out", [T((1,), torch.float32), 1e-3, 0, -128, 127, torch.int8])
add("quantize_per_tensor.out", [T((0, 4), torch.float32), 0.1, 0, -128, 127, torch.int8])
add("quantize_per_tensor.out", [T((33,), torch.float32, low=-1e4, high=1e4), 0.37, 30000,
                                -32768, 32767, torch.int16], name="large_zero_point")
add("quantize_per_tensor.out", [T((4, 9), torch.float32), 0.05, 1, -128, 127, torch.int8],
    out_shapes=[(2, 2)], name="resizes_out")
for args, error, name in [
        ([0.1, 0, 5, 4, torch.int8], "'quant_min' (5) is greater than 'quant_max' (4)", "min>max"),
        ([0.1, 0, -129, 127, torch.int8], "'quant_min' is -129", "min_below_dtype"),
        ([0.1, 0, 0, 256, torch.uint8], "'quant_max' is 256", "max_above_dtype"),
        ([0.1, 0, -128, 127, torch.float32], "argument 'dtype' is float32", "float_dtype"),
        ([0.1, 0, -128, 127, torch.int64], "argument 'dtype' is int64", "int64_dtype"),
        ([0.0, 0, -128, 127, torch.int8], "argument 'scale' is 0", "zero_scale"),
        ([-0.5, 0, -128, 127, torch.int8], "argument 'scale' is -0.5", "negative_scale"),
        ([NAN, 0, -128, 127, torch.int8], "argument 'scale' is nan", "nan_scale"),
        ([INF, 0, -128, 127, torch.int8], "argument 'scale' is inf", "inf_scale")]:
    add("quantize_per_tensor.out", [T((2, 3), torch.float32)] + args, expect_error=error,
        out_dtype=torch.int8, name=name)
add("quantize_per_tensor.out", [T((2, 3), torch.float64), 0.1, 0, -128, 127, torch.int8],
    expect_error="argument 'input' has dtype float64", out_dtype=torch.int8, name="f64_input")
add("quantize_per_tensor.out", [T((2, 3), torch.int32), 0.1, 0, -128, 127, torch.int8],
    expect_error="argument 'input' has dtype int32", out_dtype=torch.int8, name="int_input")
add("quantize_per_tensor.out", [T((2, 3), torch.float32), 0.1, 0, -128, 127, torch.int8],
    expect_error="argument 'out' has dtype uint8, expected int8", out_dtype=torch.uint8,
    name="out_dtype")

for s_dt, z_dt in [(torch.float64, torch.int64), (torch.float32, torch.int32)]:
    for in_dt in FLOAT_INPUTS:
        add("quantize_per_tensor.Tensor_out", [T((4, 6), in_dt), one(0.07, s_dt), one(-5, z_dt),
                                               -128, 127, torch.int8])
add("quantize_per_tensor.Tensor_out", [T((3,), torch.float32, values=[NAN, INF, 1.25]),
                                       one(0.5, torch.float64), one(200, torch.int64), 0, 255,
                                       torch.uint8], name="nan_inf")
add("quantize_per_tensor.Tensor_out", [T((3,), torch.float32), T((2,), torch.float64),
                                       one(0, torch.int64), -128, 127, torch.int8],
    expect_error="argument 'scale' must have one element, got 2", out_dtype=torch.int8)
add("quantize_per_tensor.Tensor_out", [T((3,), torch.float32), one(0.1, torch.float64),
                                       one(0.0, torch.float32), -128, 127, torch.int8],
    expect_error="argument 'zero_point' has dtype float32", out_dtype=torch.int8)
add("quantize_per_tensor.Tensor_out", [T((3,), torch.float32), one(0.0, torch.float64),
                                       one(0, torch.int64), -128, 127, torch.int8],
    expect_error="argument 'scale' is 0", out_dtype=torch.int8, name="zero_scale")

# --- quantize_per_channel.out
SHAPE = (4, 3, 5)
for axis in [0, 1, 2, -1, -3]:
    channels = SHAPE[axis]
    for s_dt in [torch.float64, torch.float32]:
        for q_dt, lo, hi, zp in QTYPES[:2]:
            add("quantize_per_channel.out",
                [T(SHAPE, torch.float32), T((channels,), s_dt, low=0.005, high=0.05),
                 T((channels,), torch.int64, low=zp - 5, high=zp + 5), axis, lo, hi, q_dt])
for in_dt in FLOAT_INPUTS[1:]:
    add("quantize_per_channel.out", [T((6, 7), in_dt), T((6,), torch.float64, low=0.01, high=0.1),
                                     T((6,), torch.int32, low=-3, high=3), 0, -128, 127, torch.int8])
add("quantize_per_channel.out", [T((2, 4), torch.float32, values=[[NAN, INF, -INF, 0.75]] * 2),
                                 T((2,), torch.float64, values=[0.5, 0.25]),
                                 T((2,), torch.int64, values=[0, 1]), 0, -128, 127, torch.int8],
    name="nan_inf_ties")
add("quantize_per_channel.out", [T((1, 1), torch.float32), T((1,), torch.float64, values=[0.1]),
                                 T((1,), torch.int64, values=[0]), 1, -128, 127, torch.int8])
for args, error, name in [
        ([T((3,), torch.float64, low=0.1, high=0.2), T((3,), torch.int64), 2], "argument 'axis' is 2",
         "axis_too_big"),
        ([T((3,), torch.float64, low=0.1, high=0.2), T((3,), torch.int64), -3], "argument 'axis' is -3",
         "axis_too_small"),
        ([T((4,), torch.float64, low=0.1, high=0.2), T((3,), torch.int64), 0],
         "argument 'scales' has 4 elements, expected 3", "scales_count"),
        ([T((3,), torch.float64, low=0.1, high=0.2), T((2,), torch.int64), 0],
         "argument 'zero_points' has 2 elements, expected 3", "zero_points_count"),
        ([T((3,), torch.float64, low=0.1, high=0.2), T((3,), torch.float32), 0],
         "argument 'zero_points' has dtype float32", "zero_points_dtype"),
        ([T((3,), torch.int64), T((3,), torch.int64), 0], "argument 'scales' has dtype int64",
         "scales_dtype"),
        ([T((3,), torch.float64, values=[0.1, 0.0, 0.2]), T((3,), torch.int64), 0],
         "argument 'scales' holds 0 at 1", "zero_scale")]:
    add("quantize_per_channel.out", [T((3, 4), torch.float32)] + args + [-128, 127, torch.int8],
        expect_error=error, out_dtype=torch.int8, name=name)

# --- quantize_per_token.out (the zero point is added before rounding)
for in_dt in FLOAT_INPUTS:
    for s_dt in [torch.float64, torch.float32]:
        add("quantize_per_token.out", [T((2, 3, 8), in_dt), T((2, 3, 1), s_dt, low=0.01, high=0.1),
                                       T((2, 3, 1), torch.int64, low=-10, high=10), -128, 127,
                                       torch.int8])
add("quantize_per_token.out", [T((5, 33), torch.float32), T((5, 1), torch.float64, low=0.01, high=0.1),
                               T((5, 1), torch.int64, low=100, high=150), 0, 255, torch.uint8])
add("quantize_per_token.out", [T((2, 4), torch.float32, values=[[NAN, INF, -INF, 0.25]] * 2),
                               T((2, 1), torch.float64, values=[[0.5], [0.5]]),
                               T((2, 1), torch.int64, values=[[0], [1]]), -128, 127, torch.int8],
    name="nan_inf_ties")
add("quantize_per_token.out", [T((3, 4), torch.float32), T((2, 1), torch.float64, low=0.1, high=0.2),
                               T((3, 1), torch.int64), -128, 127, torch.int8],
    expect_error="argument 'scales' has 2 elements, expected 3 (one per token)", out_dtype=torch.int8)
add("quantize_per_token.out", [T((3, 4), torch.float32), T((3, 1), torch.float64, low=0.1, high=0.2),
                               T((3, 1), torch.int64), 10, -10, torch.int8],
    expect_error="is greater than", out_dtype=torch.int8)

# --- dequantize_per_tensor.out / .Tensor_out (out_dtype kwarg)
def qtensor(shape, q_dt):
    info = torch.iinfo(q_dt)
    low, high = max(info.min, -200000), min(info.max, 200000)
    return T(shape, q_dt, low=low, high=high + 1 if high < 2**31 - 1 else high)


for q_dt, lo, hi, zp in QTYPES:
    for out_dt in [None, torch.float16, torch.bfloat16, torch.float64, torch.float32]:
        add("dequantize_per_tensor.out", {"input": qtensor((3, 7), q_dt), "scale": 0.0123,
                                          "zero_point": zp, "quant_min": lo, "quant_max": hi,
                                          "dtype": q_dt, "out_dtype": out_dt})
add("dequantize_per_tensor.out", [qtensor((257,), torch.int8), 0.5, -1, -128, 127, torch.int8],
    name="odd_length")
for args, error, name in [
        ([0.1, 0, 0, 255, torch.uint8], "argument 'input' has dtype int8, expected uint8",
         "input_vs_dtype"),
        ([0.1, 0, 127, -128, torch.int8], "is greater than", "min>max"),
        ([0.1, 0, -300, 127, torch.int8], "'quant_min' is -300", "min_below_dtype")]:
    add("dequantize_per_tensor.out", [qtensor((2, 3), torch.int8)] + args, expect_error=error,
        out_dtype=torch.float32, name=name)
add("dequantize_per_tensor.out", {"input": qtensor((2, 3), torch.int8), "scale": 0.1,
                                  "zero_point": 0, "quant_min": -128, "quant_max": 127,
                                  "dtype": torch.int8, "out_dtype": torch.int32},
    expect_error="argument 'out_dtype' is int32", out_dtype=torch.int32, name="int_out_dtype")
add("dequantize_per_tensor.out", [qtensor((2, 3), torch.int8), 0.1, 0, -128, 127, torch.int8],
    expect_error="argument 'out' has dtype float16, expected float32", out_dtype=torch.float16,
    name="out_vs_out_dtype")
for s_dt, z_dt in [(torch.float64, torch.int64), (torch.float32, torch.int32)]:
    for out_dt in [None, torch.float16]:
        add("dequantize_per_tensor.Tensor_out",
            {"input": qtensor((4, 5), torch.uint8), "scale": one(0.021, s_dt),
             "zero_point": one(131, z_dt), "quant_min": 0, "quant_max": 255, "dtype": torch.uint8,
             "out_dtype": out_dt})
add("dequantize_per_tensor.Tensor_out", [qtensor((4,), torch.int8), T((3,), torch.float64),
                                         one(0, torch.int64), -128, 127, torch.int8],
    expect_error="argument 'scale' must have one element, got 3", out_dtype=torch.float32)

# --- dequantize_per_channel.out (zero_points optional)
for axis in [0, 1, 2, -1]:
    channels = SHAPE[axis]
    for s_dt in [torch.float64, torch.float32]:
        for with_zp in [True, False]:
            zps = T((channels,), torch.int64, low=-5, high=5) if with_zp else None
            add("dequantize_per_channel.out",
                {"input": qtensor(SHAPE, torch.int8), "scales": T((channels,), s_dt, low=0.005, high=0.05),
                 "zero_points": zps, "axis": axis, "quant_min": -128, "quant_max": 127,
                 "dtype": torch.int8})
for q_dt, lo, hi, zp in QTYPES:
    for out_dt in [torch.float16, torch.bfloat16, torch.float64]:
        add("dequantize_per_channel.out",
            {"input": qtensor((3, 5), q_dt), "scales": T((3,), torch.float32, low=0.01, high=0.1),
             "zero_points": T((3,), torch.int32, low=zp - 2, high=zp + 2), "axis": 0,
             "quant_min": lo, "quant_max": hi, "dtype": q_dt, "out_dtype": out_dt})
add("dequantize_per_channel.out", [qtensor((3, 4), torch.int8), T((4,), torch.float32),
                                   None, 2, -128, 127, torch.int8],
    expect_error="argument 'axis' is 2", out_dtype=torch.float32)
add("dequantize_per_channel.out", [qtensor((3, 4), torch.int8), T((4,), torch.float32),
                                   T((3,), torch.int64), 1, -128, 127, torch.int8],
    expect_error="argument 'zero_points' has 3 elements, expected 4", out_dtype=torch.float32)

# --- dequantize_per_token.out
for out_dt in [torch.float32, torch.float16]:
    for s_dt in [torch.float64, torch.float32]:
        add("dequantize_per_token.out",
            [qtensor((3, 4, 16), torch.int8), T((3, 4, 1), s_dt, low=0.01, high=0.1),
             T((3, 4, 1), torch.int64, low=-10, high=10), -128, 127, torch.int8, out_dt])
add("dequantize_per_token.out", [qtensor((3, 4), torch.int8), T((3, 1), torch.float64),
                                 T((4, 1), torch.int64), -128, 127, torch.int8, torch.float32],
    expect_error="argument 'zero_points' has 4 elements, expected 3", out_dtype=torch.float32)

# --- dequantize_per_channel_group.out (group sizes 32/64/128, zero points none/int/float)
for group in [32, 64, 128]:
    for s_dt in [torch.float32, torch.float16]:
        for zp_kind in ["none", "int", "float"]:
            groups = 256 // group
            zps = {"none": None, "int": T((4, groups), torch.int32, low=-3, high=3),
                   "float": T((4, groups), s_dt, low=-2, high=2)}[zp_kind]
            for out_dt in [torch.float32, torch.float16]:
                add("dequantize_per_channel_group.out",
                    [T((4, 256), torch.int8, low=-8, high=8), T((4, groups), s_dt, low=0.01, high=0.2),
                     zps, -8, 7, torch.int8, group, out_dt],
                    name=f"g{group},s={s_dt},zp={zp_kind},out={out_dt}")
add("dequantize_per_channel_group.out",
    [T((3, 40), torch.int8), T((3, 1), torch.float32, low=0.1, high=0.2), None, -128, 127,
     torch.int8, 128, torch.float32], name="group_wider_than_row")
for args, error, name in [
        ([T((2, 4), torch.float32), None, -128, 127, torch.int8, 1, torch.float32],
         "argument 'group_size' is 1", "group_1"),
        ([T((2, 4), torch.float32), None, -128, 127, torch.int8, 12, torch.float32],
         "argument 'group_size' (12) does not divide", "group_not_dividing"),
        ([T((2, 3), torch.float32), None, -128, 127, torch.int8, 8, torch.float32],
         "argument 'scales' has 6 elements, expected 8", "scales_count"),
        ([T((2, 4), torch.float32), T((2, 4), torch.float16), -128, 127, torch.int8, 8,
          torch.float32], "argument 'zero_points' has dtype float16", "zp_dtype")]:
    add("dequantize_per_channel_group.out", [T((2, 32), torch.int8)] + args, expect_error=error,
        out_dtype=torch.float32, name=name)

# --- choose_qparams.Tensor_out (torch's determine_qparams)
for in_dt in FLOAT_INPUTS:
    for q_dt, lo, hi, zp in QTYPES[:3]:
        add("choose_qparams.Tensor_out", [T((4, 9), in_dt, low=-2, high=5), lo, hi,
                                          torch.finfo(torch.float32).eps, q_dt])
add("choose_qparams.Tensor_out", [T((6,), torch.float32, low=0.5, high=3), -128, 127, 1e-5,
                                  torch.int8], name="all_positive")
add("choose_qparams.Tensor_out", [T((6,), torch.float32, low=-3, high=-0.5), 0, 255, 1e-5,
                                  torch.uint8], name="all_negative")
add("choose_qparams.Tensor_out", [T((5,), torch.float32, values=[0.0] * 5), -128, 127, 1e-3,
                                  torch.int8], name="zeros_eps")
add("choose_qparams.Tensor_out", [T((3,), torch.float32), 1, 127, 1e-5, torch.int8],
    expect_error="must include 0", out_dtype=[torch.float64, torch.int64], out_shapes=[(1,), (1,)])
add("choose_qparams.Tensor_out", [T((3,), torch.float32, values=[1.0, NAN, 2.0]), -128, 127, 1e-5,
                                  torch.int8],
    expect_error="argument 'input' holds NaN", out_dtype=[torch.float64, torch.int64],
    out_shapes=[(1,), (1,)])
add("choose_qparams.Tensor_out", [T((3,), torch.float32), -128, 127, 0.0, torch.int8],
    expect_error="argument 'eps' is 0", out_dtype=[torch.float64, torch.int64],
    out_shapes=[(1,), (1,)])

# --- choose_qparams_per_token_asymmetric.out
for in_dt in FLOAT_INPUTS:
    add("choose_qparams_per_token_asymmetric.out", [T((2, 3, 17), in_dt, low=-4, high=3), torch.int8])
add("choose_qparams_per_token_asymmetric.out",
    [T((3, 4), torch.float32, values=[[0.5, 1.0, 2.0, 3.0], [-3.0, -1.0, -0.5, -0.25],
                                      [0.0, 0.0, 0.0, 0.0]]), torch.int8], name="one_sided_zero")
add("choose_qparams_per_token_asymmetric.out", [T((64,), torch.float32), torch.int8], name="1d")
add("choose_qparams_per_token_asymmetric.out", [T((3, 0), torch.float32), torch.int8],
    expect_error="tokens of 0 values", out_dtype=[torch.float64, torch.int64],
    out_shapes=[(3, 1), (3, 1)])

# --- embeddings: exir's definitions, written out with torch ops.
def _dequant_rows(weight_int, scales, zps, out_dtype):
    groups = scales.size(1) if scales.dim() == 2 else 1
    group_size = weight_int.size(1) // groups
    return torch.ops.quantized_decomposed.dequantize_per_channel_group(
        weight_int, scales, zps, -128, 127, weight_int.dtype, group_size, out_dtype)


def _unpack(weight, bits):
    if bits == 8:
        return weight
    if bits == 4:
        unpacked = torch.stack((weight.div(16, rounding_mode="trunc"), weight.remainder(16)), dim=-1)
        return unpacked.view(weight.shape[0], -1).view(torch.int8).add(-8)
    parts = (weight & 3, (weight & 12) >> 2, (weight & 48) >> 4, (weight & 192) >> 6)
    return torch.stack(parts, dim=-1).view(weight.shape[0], -1).view(torch.int8).add(-2)


def embedding_reference(bits, with_dtype):
    def reference(weight, scales, zps, qmin, qmax, indices, dtype=None):
        out_dtype = dtype if (with_dtype and dtype is not None) else scales.dtype
        table = _dequant_rows(_unpack(weight, bits), scales, zps, out_dtype)
        return torch.nn.functional.embedding(indices, table)
    return reference


BITS = {8: ("embedding_byte", -128, 127), 4: ("embedding_4bit", -8, 7), 2: ("embedding_2bit", -2, 1)}
for bits, (op, qmin, qmax) in BITS.items():
    per_byte = 8 // bits
    for w_dt in [torch.uint8, torch.int8]:
        for s_dt in [torch.float32, torch.float16]:
            for group in [32, 64, 128]:
                dim = 256
                groups = dim // group
                packed = dim // per_byte
                wlow, whigh = (0, 256) if w_dt == torch.uint8 else (-128, 128)
                for with_zp in [False, True]:
                    zps = T((10, groups), s_dt, low=-1, high=1) if with_zp else None
                    args = [T((10, packed), w_dt, low=wlow, high=whigh),
                            T((10, groups), s_dt, low=0.01, high=0.1), zps, qmin, qmax,
                            T((3, 4), torch.int64, low=0, high=10)]
                    add(op + ".out", args, reference=embedding_reference(bits, False),
                        name=f"{w_dt},{s_dt},g{group},zp={with_zp}")
            for dtype in [None, torch.float32, torch.float16]:
                args = {"weight": T((7, 64 // per_byte), w_dt, low=0 if w_dt == torch.uint8 else -128,
                                    high=256 if w_dt == torch.uint8 else 128),
                        "weight_scales": T((7,), s_dt, low=0.01, high=0.1), "weight_zero_points": None,
                        "weight_quant_min": qmin, "weight_quant_max": qmax,
                        "indices": T((5,), torch.int32, low=0, high=7), "dtype": dtype}
                add(op + ".dtype_out", args, reference=embedding_reference(bits, True),
                    name=f"per_row,{w_dt},{s_dt},dtype={dtype}")
    base = [T((6, 64 // per_byte), torch.uint8), T((6, 2), torch.float32, low=0.01, high=0.1), None,
            qmin, qmax]
    add(op + ".out", base + [T((3,), torch.int64, values=[0, 6, 1])],
        expect_error="argument 'indices' holds 6 at position 1", out_dtype=torch.float32,
        out_shapes=[(3, 64)], name="index_too_big")
    add(op + ".out", base + [T((2,), torch.int64, values=[-1, 0])],
        expect_error="argument 'indices' holds -1 at position 0", out_dtype=torch.float32,
        out_shapes=[(2, 64)], name="negative_index")
    add(op + ".out", [T((6, 64 // per_byte), torch.uint8), T((5, 2), torch.float32), None, qmin,
                      qmax, T((2,), torch.int64, low=0, high=5)],
        expect_error="argument 'weight_scales' has 5 rows", out_dtype=torch.float32,
        out_shapes=[(2, 64)], name="scales_rows")
    add(op + ".out", [T((6, 64 // per_byte), torch.uint8), T((6, 2), torch.float32),
                      T((6, 2), torch.int64), qmin, qmax, T((2,), torch.int64, low=0, high=5)],
        expect_error="argument 'weight_zero_points' has dtype int64", out_dtype=torch.float32,
        out_shapes=[(2, 64)], name="zero_points_dtype")
    add(op + ".out", [T((6, 64 // per_byte), torch.int16), T((6, 2), torch.float32), None, qmin,
                      qmax, T((2,), torch.int64, low=0, high=5)],
        expect_error="argument 'weight' has dtype int16", out_dtype=torch.float32,
        out_shapes=[(2, 64)], name="weight_dtype")
    if bits != 8:
        add(op + ".out", base[:3] + [-128, 127, T((2,), torch.int64, low=0, high=5)],
            expect_error="expected %d and %d for %d-bit weights" % (qmin, qmax, bits),
            out_dtype=torch.float32, out_shapes=[(2, 64)], name="range")

# --- mixed_mm / mixed_linear (upstream's definitions, reference in float64)
def mixed_mm_reference(x, w, s, zps):
    return (x.double() @ (w.double() * s.double()[:, None])).to(x.dtype)


def mixed_linear_reference(x, w, s, zps, dtype=None):
    k = w.size(1)
    groups = s.size(1) if s.dim() == 2 else 1
    group = (k + groups - 1) // groups
    expanded = (s.double() if s.dim() == 2 else s.double()[:, None]).repeat_interleave(group, dim=1)
    out = x.double() @ (w.double() * expanded[:, :k]).T
    return out.to(dtype or x.dtype)


for in_dt, tol in [(torch.float32, 1e-4), (torch.float16, 2e-2)]:
    for m, k, n in [(1, 16, 5), (3, 33, 7), (4, 64, 2)]:
        add("mixed_mm.out", [T((m, k), in_dt, low=-1, high=1), T((k, n), torch.int8, low=-128, high=128),
                             T((k,), in_dt, low=0.001, high=0.01), None],
            reference=mixed_mm_reference, rtol=tol, atol=tol)
    for m, k, n, groups in [(1, 64, 9, 1), (3, 64, 5, 2), (2, 100, 4, 3), (5, 256, 3, 8)]:
        s_shape = (n, groups) if groups > 1 else (n,)
        for dtype in [None, torch.float32, torch.float16]:
            out_tol = 2e-2 if (dtype or in_dt) == torch.float16 else tol
            add("mixed_linear.out", [T((m, k), in_dt, low=-1, high=1),
                                     T((n, k), torch.int8, low=-128, high=128),
                                     T(s_shape, in_dt, low=0.001, high=0.01), None, dtype],
                reference=mixed_linear_reference, rtol=out_tol, atol=out_tol)
add("mixed_linear.out", [T((2, 8), torch.float32), T((3, 8), torch.int8), T((3,), torch.float32),
                         T((3,), torch.float32), None],
    expect_error="argument 'weight_zero_points' must be None", out_dtype=torch.float32,
    out_shapes=[(2, 3)])
add("mixed_linear.out", [T((2, 8), torch.float32), T((3, 8), torch.int16), T((3,), torch.float32),
                         None, None],
    expect_error="argument 'weight' has dtype int16", out_dtype=torch.float32, out_shapes=[(2, 3)])
add("mixed_linear.out", [T((2, 8), torch.float32), T((3, 7), torch.int8), T((3,), torch.float32),
                         None, None],
    expect_error="argument 'weight' has 7 columns", out_dtype=torch.float32, out_shapes=[(2, 3)])
add("mixed_mm.out", [T((2, 8), torch.float32), T((8, 3), torch.int8), T((8,), torch.float16), None],
    expect_error="argument 'weight_scales' has dtype float16", out_dtype=torch.float32,
    out_shapes=[(2, 3)])

# --- add.out: dequantize both, add in float32, quantize (torch's per-tensor ops)
def qadd_reference(a, a_s, a_zp, a_min, a_max, b, b_s, b_zp, b_min, b_max, o_s, o_zp, o_min, o_max):
    qd = torch.ops.quantized_decomposed
    total = (qd.dequantize_per_tensor(a, a_s, a_zp, a_min, a_max, a.dtype)
             + qd.dequantize_per_tensor(b, b_s, b_zp, b_min, b_max, b.dtype))
    return qd.quantize_per_tensor(total, o_s, o_zp, o_min, o_max, a.dtype)


for q_dt, lo, hi, zp in QTYPES[:3]:
    add("add.out", [qtensor((3, 11), q_dt), 0.02, zp, lo, hi, qtensor((3, 11), q_dt), 0.05, zp, lo, hi,
                    0.07, zp, lo, hi], reference=qadd_reference)
add("add.out", [qtensor((4,), torch.uint8), 0.1, 0, 0, 255, qtensor((5,), torch.uint8), 0.1, 0, 0,
                255, 0.1, 0, 0, 255],
    expect_error="must have the same shape", out_dtype=torch.uint8)
add("add.out", [qtensor((4,), torch.uint8), 0.1, 0, 0, 255, qtensor((4,), torch.int8), 0.1, 0,
                -128, 127, 0.1, 0, 0, 255],
    expect_error="argument 'b' has dtype int8", out_dtype=torch.uint8)
add("add.out", [qtensor((4,), torch.uint8), 0.1, 0, 0, 255, qtensor((4,), torch.uint8), 0.1, 0, 0,
                255, 0.0, 0, 0, 255],
    expect_error="argument 'out_scale' is 0", out_dtype=torch.uint8)
add("add.out", [qtensor((4,), torch.uint8), 0.1, 0, 0, 255, qtensor((4,), torch.uint8), 0.1, 0, 0,
                255, 0.1, 0, 0, 300],
    expect_error="argument 'out_quant_max' is 300", out_dtype=torch.uint8)

# --- torchlight::linear_8da4w.out: the fused kernel against the decomposed 8da4w graph
# (torchao's Int8DynActInt4WeightLinear: per-token int8 activations, int4 group-wise
# symmetric weights) run with torch's own quantized_decomposed ops.
def linear_8da4w_reference(x, packed, scales, group_size, bias=None):
    qd = torch.ops.quantized_decomposed
    s, zp = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
    xq = qd.quantize_per_token(x, s, zp, -128, 127, torch.int8)
    xdq = qd.dequantize_per_token(xq, s, zp, -128, 127, torch.int8, torch.float32)
    w = _unpack(packed, 4)
    wdq = qd.dequantize_per_channel_group(w, scales, None, -8, 7, torch.int8, group_size,
                                          torch.float32)
    return torch.nn.functional.linear(xdq, wdq, bias)


for group in [32, 64, 128, 256]:
    for m_shape in [(1,), (3,), (2, 5)]:
        k, n = 256, 37
        CASES.append(Case("torchlight::linear_8da4w.out",
                          [T(m_shape + (k,), torch.float32, low=-2, high=2),
                           T((n, k // 2), torch.uint8, low=0, high=256),
                           T((n, k // group), torch.float32, low=0.005, high=0.05), group,
                           T((n,), torch.float32) if m_shape == (3,) else None],
                          reference=linear_8da4w_reference, rtol=1e-4, atol=1e-4,
                          name=f"g{group},rows={m_shape}"))
# Prefill-shaped calls (64 rows or more, groups up to 64) take the
# dequantized fp32 GEMM (kernels/quantized/dequantized_gemm.h): odd row counts
# around and past its threshold, every group size, K not a multiple of 64.
for group in [32, 64, 128, 256]:
    for rows in [5, 7, 17, 64, 129]:
        k, n = (256, 37) if group != 32 else (96, 29)
        CASES.append(Case("torchlight::linear_8da4w.out",
                          [T((rows, k), torch.float32, low=-2, high=2),
                           T((n, k // 2), torch.uint8, low=0, high=256),
                           T((n, k // group), torch.float32, low=0.005, high=0.05), group,
                           T((n,), torch.float32) if rows in (17, 129) else None],
                          reference=linear_8da4w_reference, rtol=1e-4, atol=1e-4,
                          name=f"g{group},rows={rows}"))
# With AMX, 8 rows or more run on tiles (kernels/quantized/linear_8da4w_amx.h):
# rows around whole tiles of 16, K of one to eight groups, N not a multiple of 16.
for group in [32, 64, 128]:
    for rows, groups in [(8, 4), (16, 1), (31, 3), (33, 8), (40, 5), (47, 2)]:
        k, n = group * groups, 37
        CASES.append(Case("torchlight::linear_8da4w.out",
                          [T((rows, k), torch.float32, low=-2, high=2),
                           T((n, k // 2), torch.uint8, low=0, high=256),
                           T((n, groups), torch.float32, low=0.005, high=0.05), group,
                           T((n,), torch.float32) if rows % 2 else None],
                          reference=linear_8da4w_reference, rtol=1e-4, atol=1e-4,
                          name=f"tiles,g{group},rows={rows},groups={groups}"))
CASES.append(Case("torchlight::linear_8da4w.out",
                  [T((2, 48), torch.float32), T((3, 24), torch.uint8, low=0, high=256),
                   T((3, 3), torch.float32, low=0.01, high=0.1), 16, None],
                  reference=linear_8da4w_reference, rtol=1e-4, atol=1e-4, name="group16_generic"))
CASES.append(Case("torchlight::linear_8da4w.out",
                  [T((2, 64), torch.float32), T((3, 32), torch.uint8), T((3, 2), torch.float32), 48,
                   None],
                  expect_error="argument 'group_size' is 48", out_shapes=[(2, 3)]))
CASES.append(Case("torchlight::linear_8da4w.out",
                  [T((2, 64), torch.float32), T((3, 31), torch.uint8), T((3, 2), torch.float32), 32,
                   None],
                  expect_error="argument 'weight' has 31 packed columns", out_shapes=[(2, 3)]))
CASES.append(Case("torchlight::linear_8da4w.out",
                  [T((2, 64), torch.float32), T((3, 32), torch.int8), T((3, 2), torch.float32), 32,
                   None],
                  expect_error="argument 'weight' has dtype int8", out_shapes=[(2, 3)]))


# --- torchlight::linear_int8.out: the fused int8 weight-only linear against
# dequantize_per_channel (symmetric, axis 0) then linear, with torch's ops.
# Below 64 rows it sums int8 weights converted on the fly; more rows
# dequantize weight panels for the fp32 GEMM.
def linear_int8_reference(x, w, scales, bias=None):
    qd = torch.ops.quantized_decomposed
    wdq = qd.dequantize_per_channel(w, scales, torch.zeros(w.shape[0], dtype=torch.int64), 0,
                                    -128, 127, torch.int8)
    return torch.nn.functional.linear(x, wdq, bias)


for rows in [1, 3, 5, 7, 16, 17, 63, 64, 129]:
    for k, n in [(64, 13), (291, 40), (288, 37)]:
        CASES.append(Case("torchlight::linear_int8.out",
                          [T((rows, k), torch.float32, low=-2, high=2),
                           T((n, k), torch.int8, low=-128, high=128),
                           T((n,), torch.float32, low=0.001, high=0.02),
                           T((n,), torch.float32) if rows % 2 else None],
                          reference=linear_int8_reference, rtol=1e-4, atol=1e-4,
                          name=f"rows={rows},k={k},n={n}"))
CASES.append(Case("torchlight::linear_int8.out",
                  [T((2, 3, 64), torch.float32, low=-2, high=2),
                   T((9, 64), torch.int8, low=-128, high=128),
                   T((9,), torch.float32, low=0.001, high=0.02), None],
                  reference=linear_int8_reference, rtol=1e-4, atol=1e-4, name="batched"))


# --- torchlight::linear_4w.out: the fused int4 weight-only linear against
# dequantize_per_channel_group (symmetric) then linear, with torch's ops.
# Below 64 rows each weight is dequantized where it is used (x86 loops for
# groups of a multiple of 32, generic otherwise); more rows dequantize weight
# panels for the fp32 GEMM. Only the summation order differs from torch.
def linear_4w_reference(x, packed, scales, group_size, bias=None):
    qd = torch.ops.quantized_decomposed
    w = _unpack(packed, 4)
    wdq = qd.dequantize_per_channel_group(w, scales, None, -8, 7, torch.int8, group_size,
                                          torch.float32)
    return torch.nn.functional.linear(x, wdq, bias)


for group in [32, 64, 128, 256]:
    for m_shape in [(1,), (3,), (2, 5), (64,), (129,)]:
        k, n = (256, 37) if group != 32 else (96, 29)
        CASES.append(Case("torchlight::linear_4w.out",
                          [T(m_shape + (k,), torch.float32, low=-2, high=2),
                           T((n, k // 2), torch.uint8, low=0, high=256),
                           T((n, k // group), torch.float32, low=0.005, high=0.05), group,
                           T((n,), torch.float32) if m_shape in ((3,), (129,)) else None],
                          reference=linear_4w_reference, rtol=1e-4, atol=1e-4,
                          name=f"g{group},rows={m_shape}"))
for rows in [3, 70]:
    CASES.append(Case("torchlight::linear_4w.out",
                      [T((rows, 48), torch.float32), T((3, 24), torch.uint8, low=0, high=256),
                       T((3, 3), torch.float32, low=0.01, high=0.1), 16, None],
                      reference=linear_4w_reference, rtol=1e-4, atol=1e-4,
                      name=f"group16_generic,rows={rows}"))
CASES.append(Case("torchlight::linear_4w.out",
                  [T((2, 64), torch.float32), T((3, 32), torch.uint8), T((3, 2), torch.float32), 48,
                   None],
                  expect_error="argument 'group_size' is 48", out_shapes=[(2, 3)]))
CASES.append(Case("torchlight::linear_4w.out",
                  [T((2, 64), torch.float32), T((3, 32), torch.int8), T((3, 2), torch.float32), 32,
                   None],
                  expect_error="argument 'weight' has dtype int8", out_shapes=[(2, 3)]))
CASES.append(Case("torchlight::linear_4w.out",
                  [T((2, 64), torch.float32), T((3, 32), torch.uint8), T((3, 3), torch.float32), 32,
                   None],
                  expect_error="argument 'weight_scales' has 9 elements", out_shapes=[(2, 3)]))


# --- torchlight::linear_qs8.out / .Tensor_out: pt2e's int8 linear fused, against
# dequantize_per_tensor of the int8 input (scalar or tensor qparams), then the
# int8 weight-only reference above. Every row count of the 4-row blocks, K with
# and without a tail of fewer than 16, zero points at both ends of int8.
def linear_qs8_reference(x, x_scale, x_zero_point, w, scales, bias=None):
    qd = torch.ops.quantized_decomposed
    if isinstance(x_scale, torch.Tensor):
        xdq = qd.dequantize_per_tensor.tensor(x, x_scale, x_zero_point, -128, 127, torch.int8)
    else:
        xdq = qd.dequantize_per_tensor(x, x_scale, x_zero_point, -128, 127, torch.int8)
    return linear_int8_reference(xdq, w, scales, bias)


for rows in [1, 3, 5, 7, 33]:
    for k, n in [(64, 13), (291, 40)]:
        for zp in [-128, 5, 127]:
            CASES.append(Case("torchlight::linear_qs8.out",
                              [T((rows, k), torch.int8, low=-128, high=128), 0.0173, zp,
                               T((n, k), torch.int8, low=-127, high=128),
                               T((n,), torch.float32, low=0.001, high=0.02),
                               T((n,), torch.float32) if rows % 2 else None],
                              reference=linear_qs8_reference, rtol=1e-5, atol=1e-4,
                              name=f"rows={rows},k={k},zp={zp}"))
for rows in [1, 6]:
    CASES.append(Case("torchlight::linear_qs8.Tensor_out",
                      [T((rows, 291), torch.int8, low=-128, high=128),
                       T((1,), torch.float64, values=[0.021]), T((1,), torch.int64, values=[-7]),
                       T((40, 291), torch.int8, low=-127, high=128),
                       T((40,), torch.float32, low=0.001, high=0.02), T((40,), torch.float32)],
                      reference=linear_qs8_reference, rtol=1e-5, atol=1e-4, name=f"rows={rows}"))
CASES.append(Case("torchlight::linear_qs8.out",
                  [T((2, 3, 64), torch.int8, low=-128, high=128), 0.05, 0,
                   T((9, 64), torch.int8, low=-127, high=128),
                   T((9,), torch.float32, low=0.001, high=0.02), None],
                  reference=linear_qs8_reference, rtol=1e-5, atol=1e-4, name="batched"))
CASES.append(Case("torchlight::linear_qs8.out",
                  [T((2, 64), torch.float32), 0.05, 0, T((3, 64), torch.int8),
                   T((3,), torch.float32), None],
                  expect_error="argument 'input' has dtype float32, expected int8",
                  out_shapes=[(2, 3)]))
CASES.append(Case("torchlight::linear_qs8.out",
                  [T((2, 64), torch.int8), 0.05, 200, T((3, 64), torch.int8),
                   T((3,), torch.float32), None],
                  expect_error="argument 'input_zero_point' is 200", out_shapes=[(2, 3)],
                  out_dtype=torch.float32))
CASES.append(Case("torchlight::linear_qs8.Tensor_out",
                  [T((2, 64), torch.int8), T((2,), torch.float32, values=[0.1, 0.2]),
                   T((1,), torch.int64, values=[0]), T((3, 64), torch.int8),
                   T((3,), torch.float32), None],
                  expect_error="argument 'input_scale' must have one element",
                  out_shapes=[(2, 3)], out_dtype=torch.float32))
