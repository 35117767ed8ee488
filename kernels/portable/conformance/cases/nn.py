"""Conformance cases of the neural-network kernels: matmul (mm, bmm, addmm), linear,
convolution, pooling, normalization, embedding, upsampling.

Every op is checked against torch over the dtypes ATen's CPU kernels take
(found by trying torch 2.6), the geometry grids that matter for it
(strides, padding, dilation, groups, ceil_mode...), empty tensors, channels-
last / transposed layouts, and error cases whose message must name the
argument at fault.

Tolerances: sums of many products make float results depend on the
summation order (our loops vs ATen's BLAS / oneDNN), so cases that sum more
than a handful of terms widen atol to about (terms * eps * |term|), noted at
each use; integer results are exact (wrapping arithmetic is order-free).
"""

import torch

from conformance.spec import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, REAL_DTYPES_NO_BOOL, Case,
                              T)

CASES = []
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32 = torch.int64, torch.int32
CL = (0, 2, 3, 1)  # channels-last dim order of a 4-D tensor


def dn(dtype):
    return str(dtype).replace("torch.", "")


def add(op, args, **kw):
    CASES.append(Case(op, args, **kw))


# Tolerances for sums of about `terms` products of values in [-3, 3).
def sum_tol(dtype, terms):
    if dtype == F32:
        return {"atol": max(1e-5, 2e-7 * terms * 9), "rtol": 1e-5}
    if dtype == F16:
        return {"atol": max(1e-3, 2e-3 * terms ** 0.5), "rtol": 2e-3}
    if dtype == BF16:
        return {"atol": max(1.6e-2, 1.6e-2 * terms ** 0.5), "rtol": 1.6e-2}
    return {}


# ---------------------------------------------------------------- mm / bmm / addmm

MM = "aten::mm.out"
BMM = "aten::bmm.out"
ADDMM = "aten::addmm.out"

for dt in REAL_DTYPES_NO_BOOL:
    add(MM, {"self": T((3, 4), dt), "mat2": T((4, 5), dt)}, **sum_tol(dt, 4))
    add(MM, {"self": T((3, 4), dt), "mat2": T((4, 6), dt, dim_order=(1, 0))},
        name=f"{dn(dt)}-transposed-mat2", **sum_tol(dt, 4))
    add(BMM, {"self": T((2, 3, 4), dt), "mat2": T((2, 4, 5), dt)}, **sum_tol(dt, 4))
    add(ADDMM, {"self": T((5,), dt), "mat1": T((3, 4), dt), "mat2": T((4, 5), dt)},
        **sum_tol(dt, 5))
    # nn.Linear's form: addmm(bias, x, permute(weight)).
    add(ADDMM, {"self": T((6,), dt), "mat1": T((2, 8), dt),
                "mat2": T((8, 6), dt, dim_order=(1, 0))}, name=f"{dn(dt)}-linear", **sum_tol(dt, 9))

# Longer sums, both loop orders, blocks wider than one accumulator block (128).
for dt in FLOAT_DTYPES:
    add(MM, {"self": T((3, 70), dt), "mat2": T((70, 130), dt)}, **sum_tol(dt, 70))
    add(MM, {"self": T((3, 70), dt), "mat2": T((70, 9), dt, dim_order=(1, 0))},
        name=f"{dn(dt)}-dot-k70", **sum_tol(dt, 70))
add(MM, {"self": T((4, 3), F32, dim_order=(1, 0)), "mat2": T((3, 2), F32)}, name="transposed-self")
# Row counts around the 4-row blocks, with both loop orders.
for m in [1, 5, 9]:
    add(MM, {"self": T((m, 20), F32), "mat2": T((20, 200), F32)}, **sum_tol(F32, 20))
    add(MM, {"self": T((m, 20), F32, dim_order=(1, 0)), "mat2": T((20, 7), F32, dim_order=(1, 0))},
        name=f"m{m}-both-transposed", **sum_tol(F32, 20))
add(MM, {"self": T((1, 1), F64), "mat2": T((1, 1), F64)})
# Empty: no rows, no columns, an empty inner dimension (zeros).
add(MM, {"self": T((0, 4), F32), "mat2": T((4, 3), F32)})
add(MM, {"self": T((3, 4), F32), "mat2": T((4, 0), F32)})
add(MM, {"self": T((3, 0), F32), "mat2": T((0, 4), F32)})
add(MM, {"self": T((3, 0), I64), "mat2": T((0, 4), I64)})
# int8 sums wrap, as ATen's.
add(MM, {"self": T((2, 16), torch.int8, low=50, high=100),
         "mat2": T((16, 3), torch.int8, low=50, high=100)}, name="int8-wraps")
# Non-finite values propagate.
add(MM, {"self": T((2, 2), F32, values=[[float("inf"), 1.0], [float("nan"), 2.0]]),
         "mat2": T((2, 2), F32, values=[[1.0, 0.0], [2.0, 3.0]])}, name="nonfinite")
# The out tensor is resized from another shape.
add(MM, {"self": T((2, 3), F32), "mat2": T((3, 4), F32)}, out_shapes=[(4, 2)], name="resize")

add(MM, {"self": T((2, 3), F32), "mat2": T((4, 5), F32)}, expect_error="mat2", name="err-inner")
add(MM, {"self": T((2, 3, 1), F32), "mat2": T((3, 5), F32)}, expect_error="self", name="err-rank")
add(MM, {"self": T((2, 3), F32), "mat2": T((3, 5), F64)}, expect_error="mat2", name="err-dtype")
add(MM, {"self": T((2, 3), torch.bool), "mat2": T((3, 5), torch.bool)}, expect_error="self",
    out_shapes=[(2, 5)], name="err-bool")
add(MM, {"self": T((2, 3), F32), "mat2": T((3, 5), F32)}, out_dtype=F64, expect_error="out",
    out_shapes=[(2, 5)], name="err-out-dtype")

for dt in FLOAT_DTYPES:
    add(BMM, {"self": T((3, 5, 40), dt), "mat2": T((3, 40, 7), dt, dim_order=(0, 2, 1))},
        name=f"{dn(dt)}-transposed-mat2", **sum_tol(dt, 40))
add(BMM, {"self": T((2, 4, 3), F32, dim_order=(1, 0, 2)),
          "mat2": T((2, 3, 5), F32, dim_order=(2, 1, 0))}, name="permuted")
add(BMM, {"self": T((0, 4, 3), F32), "mat2": T((0, 3, 5), F32)})
add(BMM, {"self": T((2, 0, 3), F32), "mat2": T((2, 3, 5), F32)})
add(BMM, {"self": T((2, 4, 0), I32), "mat2": T((2, 0, 5), I32)})
add(BMM, {"self": T((2, 4, 3), F32), "mat2": T((3, 3, 5), F32)}, expect_error="batch",
    name="err-batch")
add(BMM, {"self": T((2, 4, 3), F32), "mat2": T((2, 4, 5), F32)}, expect_error="mat2",
    name="err-inner")
add(BMM, {"self": T((4, 3), F32), "mat2": T((3, 5), F32)}, expect_error="self", name="err-rank")

for shape in [(3, 5), (1, 5), (3, 1), (5,), (1,), ()]:
    add(ADDMM, {"self": T(shape, F32), "mat1": T((3, 4), F32), "mat2": T((4, 5), F32)},
        name=f"self{list(shape)}")
for beta, alpha in [(0.5, 2.0), (0.0, 1.0), (1.0, 0.0), (-1.0, 0.25), (2, 3)]:
    add(ADDMM, {"self": T((3, 5), F32), "mat1": T((3, 4), F32), "mat2": T((4, 5), F32),
                "beta": beta, "alpha": alpha}, name=f"beta{beta}-alpha{alpha}")
for dt in [F16, BF16, F64]:
    add(ADDMM, {"self": T((5,), dt), "mat1": T((3, 4), dt), "mat2": T((4, 5), dt),
                "beta": 0.5, "alpha": -2.0}, **sum_tol(dt, 5))
# Integer tensors truncate float beta/alpha to the dtype (0.5 -> 0, 1.5 -> 1).
add(ADDMM, {"self": T((5,), I32), "mat1": T((3, 4), I32), "mat2": T((4, 5), I32),
            "beta": 0.5, "alpha": 1.5}, name="int-float-scalars")
add(ADDMM, {"self": T((5,), I64), "mat1": T((3, 4), I64), "mat2": T((4, 5), I64),
            "beta": 3, "alpha": -2}, name="int-scalars")
# beta == 0 ignores NaN in self. (Whether alpha == 0 ignores inf in the
# product depends on the BLAS torch uses, OpenBLAS gives NaN, so no case.)
add(ADDMM, {"self": T((2, 3), F32, values=[[float("nan")] * 3] * 2), "mat1": T((2, 2), F32),
            "mat2": T((2, 3), F32), "beta": 0.0}, name="beta0-ignores-nan")
add(ADDMM, {"self": T((1, 3), F32), "mat1": T((2, 0), F32), "mat2": T((0, 3), F32), "beta": 2.0},
    name="empty-inner")
add(ADDMM, {"self": T((3,), F32), "mat1": T((0, 4), F32), "mat2": T((4, 3), F32)}, name="no-rows")
add(ADDMM, {"self": T((4,), F32), "mat1": T((2, 2), F32), "mat2": T((2, 3), F32)},
    expect_error="self", out_shapes=[(2, 3)], name="err-self-shape")
add(ADDMM, {"self": T((3,), F64), "mat1": T((2, 2), F32), "mat2": T((2, 3), F32)},
    expect_error="self", out_shapes=[(2, 3)], name="err-self-dtype")
add(ADDMM, {"self": T((3,), F32), "mat1": T((2, 2), F32), "mat2": T((3, 3), F32)},
    expect_error="mat2", out_shapes=[(2, 3)], name="err-inner")


# ---------------------------------------------------------------- linear

LINEAR = "aten::linear.out"

for dt in REAL_DTYPES_NO_BOOL:
    add(LINEAR, {"input": T((3, 4), dt), "weight": T((5, 4), dt), "bias": T((5,), dt)},
        **sum_tol(dt, 5))
    add(LINEAR, {"input": T((2, 3, 8), dt), "weight": T((6, 8), dt)}, name=f"{dn(dt)}-3d-no-bias",
        **sum_tol(dt, 8))
# Longer dot products (8-lane sums and their tails), decode-shaped (one row).
for dt in FLOAT_DTYPES:
    add(LINEAR, {"input": T((1, 70), dt), "weight": T((130, 70), dt), "bias": T((130,), dt)},
        name=f"{dn(dt)}-decode-k70", **sum_tol(dt, 71))
    add(LINEAR, {"input": T((2, 5, 37), dt), "weight": T((9, 37), dt), "bias": T((9,), dt)},
        name=f"{dn(dt)}-prefill-k37", **sum_tol(dt, 38))
add(LINEAR, {"input": T((4,), F32), "weight": T((3, 4), F32), "bias": T((3,), F32)},
    name="1d-input")
add(LINEAR, {"input": T((2, 2, 3, 4), F32), "weight": T((5, 4), F32)}, name="4d-input")
# Any layout: a permuted input whose leading dims do not merge, a
# column-major weight, a channels-last input.
add(LINEAR, {"input": T((2, 3, 4), F32, dim_order=(1, 0, 2)), "weight": T((5, 4), F32),
             "bias": T((5,), F32)}, name="permuted-input")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32, dim_order=(1, 0))},
    name="column-major-weight")
add(LINEAR, {"input": T((2, 3, 2, 4), F32, dim_order=CL), "weight": T((5, 4), F32)},
    name="channels-last-input")
# Biases that broadcast beyond [N].
for shape in [(1,), (), (3, 1), (3, 5), (1, 5)]:
    add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32), "bias": T(shape, F32)},
        name=f"bias{list(shape)}")
# Empty: no rows, no features (the result is the bias), no outputs.
add(LINEAR, {"input": T((0, 4), F32), "weight": T((5, 4), F32), "bias": T((5,), F32)},
    name="no-rows")
add(LINEAR, {"input": T((3, 0), F32), "weight": T((5, 0), F32), "bias": T((5,), F32)},
    name="no-features")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((0, 4), F32)}, name="no-outputs")
add(LINEAR, {"input": T((2, 16), torch.int8, low=50, high=100),
             "weight": T((3, 16), torch.int8, low=50, high=100)}, name="int8-wraps")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32)}, out_shapes=[(7, 2)],
    name="resize")

add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 3), F32)}, expect_error="weight",
    out_shapes=[(3, 5)], name="err-features")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32), "bias": T((4,), F32)},
    expect_error="bias", out_shapes=[(3, 5)], name="err-bias-shape")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F64)}, expect_error="weight",
    out_shapes=[(3, 5)], name="err-weight-dtype")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32), "bias": T((5,), F64)},
    expect_error="bias", out_shapes=[(3, 5)], name="err-bias-dtype")
add(LINEAR, {"input": T((3, 4), torch.bool), "weight": T((5, 4), torch.bool)},
    expect_error="input", out_shapes=[(3, 5)], name="err-bool")
add(LINEAR, {"input": T((3, 4), F32), "weight": T((5, 4), F32)}, out_dtype=F64,
    expect_error="out", out_shapes=[(3, 5)], name="err-out-dtype")

# ---------------------------------------------------------------- convolution

CONV = "aten::convolution.out"


def conv(inp, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), transposed=False,
         output_padding=(0,), groups=1, **kw):
    add(CONV, {"input": inp, "weight": weight, "bias": bias, "stride": list(stride),
               "padding": list(padding), "dilation": list(dilation), "transposed": transposed,
               "output_padding": list(output_padding), "groups": groups}, **kw)


# Every dtype ATen's direct convolution takes (all but bool).
for dt in REAL_DTYPES_NO_BOOL:
    lo, hi = (0, 4) if dt == torch.uint8 else (-3, 3)
    conv(T((2, 3, 6, 5), dt, lo, hi), T((4, 3, 3, 3), dt, lo, hi), T((4,), dt, lo, hi),
         padding=(1,), **sum_tol(dt, 27))
# Transposed: floats and int64 only.
for dt in FLOAT_DTYPES + [I64]:
    conv(T((1, 3, 4, 5), dt), T((3, 2, 3, 3), dt), T((2,), dt), stride=(2,), transposed=True,
         output_padding=(1,), **sum_tol(dt, 12))

# Geometry grid (float32 and float64): stride, padding, dilation, groups, bias.
for dt in [F32, F64]:
    for stride in [(1, 1), (2, 1), (3, 2)]:
        for padding in [(0, 0), (1, 2)]:
            for dilation in [(1, 1), (2, 1)]:
                for groups, bias in [(1, True), (2, False)]:
                    conv(T((2, 4, 9, 8), dt), T((6, 4 // groups, 3, 2), dt),
                         T((6,), dt) if bias else None, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, **sum_tol(dt, 24))
# Depthwise (groups == channels, MobileNetV2's) and channel multipliers.
conv(T((2, 6, 7, 7), F32), T((6, 1, 3, 3), F32), T((6,), F32), padding=(1,), groups=6)
conv(T((1, 4, 8, 8), F32), T((8, 1, 3, 3), F32), None, stride=(2,), padding=(1,), groups=4)
conv(T((1, 4, 8, 8), F32, dim_order=CL), T((4, 1, 3, 3), F32), T((4,), F32), padding=(1,), groups=4)
# Output-channel counts that use every tile width (16, 4 and 1 channels).
conv(T((1, 5, 6, 7), F32), T((21, 5, 3, 3), F32), T((21,), F32), padding=(1,), **sum_tol(F32, 45))
conv(T((2, 6, 5, 5), F64), T((42, 3, 2, 2), F64), T((42,), F64), stride=(2,), groups=2)
conv(T((1, 4, 5, 5), I64), T((23, 4, 3, 3), I64), T((23,), I64), dilation=(2,))
# 1x1 (pointwise) and a wide row (more than one accumulator block of 64).
conv(T((1, 8, 5, 5), F32), T((3, 8, 1, 1), F32), T((3,), F32))
conv(T((1, 2, 3, 150), F32), T((2, 2, 3, 5), F32), T((2,), F32), padding=(1, 2), stride=(1, 1))
conv(T((1, 2, 3, 150), F32), T((2, 2, 3, 5), F32), None, padding=(1, 2), stride=(1, 2),
     dilation=(1, 3))
# Channels-last input, weight, both (ResNet/MobileNet exports keep NCHW, but
# a channels-last program must work too).
conv(T((2, 3, 6, 6), F32, dim_order=CL), T((5, 3, 3, 3), F32), T((5,), F32), padding=(1,))
conv(T((2, 3, 6, 6), F32), T((5, 3, 3, 3), F32, dim_order=CL), None, stride=(2,))
conv(T((2, 3, 6, 6), F32, dim_order=CL), T((5, 3, 3, 3), F32, dim_order=CL), T((5,), F32),
     padding=(2,), dilation=(2,))
conv(T((2, 4, 6, 6), F16, dim_order=CL), T((4, 2, 3, 3), F16), None, groups=2, **sum_tol(F16, 18))
conv(T((1, 3, 5, 5), BF16, dim_order=CL), T((2, 3, 3, 3), BF16, dim_order=CL), T((2,), BF16),
     padding=(1,), **sum_tol(BF16, 27))
# Padding that makes a kernel exactly fit, and a kernel as large as the padded input.
conv(T((1, 1, 2, 2), F32), T((1, 1, 4, 4), F32), None, padding=(1,))
conv(T((1, 2, 1, 1), F32), T((3, 2, 1, 1), F32), T((3,), F32))
# 1-D (nn.Conv1d) and 3-D.
for dt in [F32, F64, F16, I64]:
    conv(T((2, 4, 11), dt), T((6, 2, 3), dt), T((6,), dt), stride=(2,), padding=(1,),
         dilation=(2,), groups=2, **sum_tol(dt, 6))
for dt in INT_DTYPES:
    conv(T((2, 4, 11), dt), T((6, 2, 3), dt), T((6,), dt), stride=(2,), padding=(1,), groups=2)
conv(T((2, 3, 10), F32), T((4, 3, 5), F32), None)
conv(T((1, 2, 5), F32), T((2, 3, 3), F32), T((6,), F32), stride=(3,), padding=(1,),
     transposed=True, output_padding=(2,), groups=2)
conv(T((1, 2, 4, 5, 4), F32), T((3, 2, 3, 2, 2), F32), T((3,), F32), stride=(1, 2, 1),
     padding=(1, 0, 1), **sum_tol(F32, 24))
conv(T((1, 2, 3, 3, 3), F32), T((2, 2, 2, 2, 2), F32), None, stride=(2,), transposed=True)
# Transposed grid: stride, padding, dilation, output_padding, groups.
for stride, padding, dilation, output_padding, groups in [
        ((1, 1), (0, 0), (1, 1), (0, 0), 1), ((2, 2), (1, 1), (1, 1), (1, 1), 1),
        ((2, 3), (0, 1), (2, 1), (1, 2), 2), ((3, 1), (2, 0), (1, 2), (0, 1), 2),
        ((1, 1), (1, 1), (2, 2), (1, 1), 4)]:
    conv(T((2, 4, 5, 4), F32), T((4, 3, 3, 3), F32), T((3 * groups,), F32), stride=stride,
         padding=padding, dilation=dilation, transposed=True, output_padding=output_padding,
         groups=groups, **sum_tol(F32, 36))
conv(T((1, 4, 5, 5), F32, dim_order=CL), T((4, 2, 3, 3), F32), None, stride=(2,), padding=(1,),
     transposed=True, output_padding=(1,), groups=2)
# Empty batch; a wide transposed row (more than one accumulator block).
conv(T((0, 3, 5, 5), F32), T((4, 3, 3, 3), F32), T((4,), F32))
conv(T((0, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, transposed=True, stride=(2,))
conv(T((1, 1, 2, 40), F32), T((1, 2, 2, 3), F32), None, stride=(1, 2), transposed=True)

# Errors: each names the argument at fault.
conv(T((1, 3, 5, 5), F32), T((4, 2, 3, 3), F32), None, expect_error="input",
     out_shapes=[(1, 4, 3, 3)], name="err-channels")
conv(T((1, 3, 2, 2), F32), T((4, 3, 3, 3), F32), None, expect_error="weight",
     out_shapes=[(1, 4, 1, 1)], name="err-kernel-larger-than-padded-input")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, groups=3, expect_error="weight",
     out_shapes=[(1, 4, 3, 3)], name="err-groups")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, groups=0, expect_error="groups",
     out_shapes=[(1, 4, 3, 3)], name="err-groups-zero")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), T((3,), F32), groups=2, expect_error="bias",
     out_shapes=[(1, 4, 3, 3)], name="err-bias-shape")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, padding=(-1,), groups=2,
     expect_error="padding", out_shapes=[(1, 4, 3, 3)], name="err-negative-padding")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, stride=(0, 1), groups=2,
     expect_error="stride", out_shapes=[(1, 4, 3, 3)], name="err-stride")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, stride=(1, 1, 1), groups=2,
     expect_error="stride", out_shapes=[(1, 4, 3, 3)], name="err-stride-length")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F64), None, groups=2, expect_error="weight",
     out_shapes=[(1, 4, 3, 3)], name="err-weight-dtype")
conv(T((4, 5, 5), F32), T((4, 2, 3, 3), F32), None, groups=2, expect_error="weight",
     out_shapes=[(4, 3, 3)], name="err-unbatched")
conv(T((1, 4, 5, 5), torch.bool), T((4, 2, 3, 3), torch.bool), None, groups=2,
     expect_error="input", out_shapes=[(1, 4, 3, 3)], name="err-bool")
conv(T((1, 4, 5, 5), I32), T((4, 2, 3, 3), I32), None, transposed=True, expect_error="input",
     out_shapes=[(1, 2, 7, 7)], name="err-transposed-int32")
conv(T((1, 4, 5, 5), I32), T((4, 2, 3, 3), I32), None, dilation=(2,), expect_error="input",
     out_shapes=[(1, 4, 1, 1)], name="err-dilated-int32")
conv(T((1, 4, 5, 5), F32), T((4, 2, 3, 3), F32), None, stride=(2,), transposed=True,
     output_padding=(2,), expect_error="output_padding", out_shapes=[(1, 2, 11, 11)],
     name="err-output-padding")


# ---------------------------------------------------------------- pooling

MAXPOOL = "aten::max_pool2d_with_indices.out"
AVGPOOL = "aten::avg_pool2d.out"
ADAPTIVE_AVG = "aten::_adaptive_avg_pool2d.out"
ADAPTIVE_MAX = "aten::adaptive_max_pool2d.out"

for dt in REAL_DTYPES_NO_BOOL:
    add(MAXPOOL, {"self": T((2, 3, 7, 6), dt), "kernel_size": [3, 3], "stride": [2, 2],
                  "padding": [1, 1]})
for kernel, stride, padding, dilation in [
        ([2, 2], [], [0, 0], [1, 1]), ([3, 2], [1, 2], [1, 0], [1, 1]),
        ([3, 3], [2, 2], [1, 1], [2, 2]), ([2, 3], [3, 1], [1, 1], [1, 2]), ([2], [1], [0], [3])]:
    for ceil_mode in [False, True]:
        add(MAXPOOL, {"self": T((2, 3, 9, 8), F32), "kernel_size": kernel, "stride": stride,
                      "padding": padding, "dilation": dilation, "ceil_mode": ceil_mode})
add(MAXPOOL, {"self": T((3, 5, 5), F32), "kernel_size": [2, 2], "ceil_mode": True}, name="3d-input")
add(MAXPOOL, {"self": T((2, 4, 6, 6), F32, dim_order=CL), "kernel_size": [3, 3], "stride": [2, 2],
              "padding": [1, 1]}, name="channels-last")
add(MAXPOOL, {"self": T((2, 4, 6, 6), F16, dim_order=CL), "kernel_size": [2, 2]},
    name="channels-last-f16")
add(MAXPOOL, {"self": T((0, 2, 4, 4), F32), "kernel_size": [2, 2]}, name="empty-batch")
nan, inf = float("nan"), float("inf")
add(MAXPOOL, {"self": T((1, 1, 2, 4), F32, values=[[[[nan, 1, -inf, -inf], [2, nan, -inf, -inf]]]]),
              "kernel_size": [2, 2]}, name="nan-and-minus-inf")
add(MAXPOOL, {"self": T((1, 1, 3, 3), I32, values=[[[[5, 5, 1], [5, 2, 9], [0, 0, 9]]]]),
              "kernel_size": [2, 2], "stride": [1, 1]}, name="ties-keep-first")


def maxpool_error(args, error, name, shape=(1, 1, 2, 2), dtype=F32, indices_dtype=I64):
    add(MAXPOOL, args, expect_error=error, out_shapes=[shape, shape],
        out_dtype=[dtype, indices_dtype], name=name)


maxpool_error({"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2]},
              "'out' with shape [1, 1, 1, 1]",
              "err-static-out-shape", shape=(1, 1, 1, 1))
maxpool_error({"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2]}, "indices", "err-indices-dtype",
              indices_dtype=I32)
maxpool_error({"self": T((1, 1, 5, 5), F32), "kernel_size": [3, 3], "padding": [2, 2]}, "padding",
              "err-padding")
maxpool_error({"self": T((1, 1, 2, 2), F32), "kernel_size": [3, 3]}, "kernel_size",
              "err-kernel-larger-than-input")
maxpool_error({"self": T((1, 0, 4, 4), F32), "kernel_size": [2, 2]}, "self", "err-no-channels")
maxpool_error({"self": T((4, 4), F32), "kernel_size": [2, 2]}, "self", "err-2d-input", shape=(2, 2))
maxpool_error({"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2, 2]}, "kernel_size",
              "err-kernel-length")
maxpool_error({"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2], "stride": [0, 1]}, "stride",
              "err-stride")
maxpool_error({"self": T((1, 1, 4, 4), torch.bool), "kernel_size": [2, 2]}, "self", "err-bool",
              dtype=torch.bool)

for dt in FLOAT_DTYPES + [I64]:
    add(AVGPOOL, {"self": T((2, 3, 7, 6), dt), "kernel_size": [3, 3], "stride": [2, 2],
                  "padding": [1, 1]})
for kernel, stride, padding in [([2, 2], [], [0, 0]), ([3, 2], [1, 2], [1, 1]),
                                ([3, 3], [2, 2], [1, 1]), ([4, 3], [3, 2], [2, 1])]:
    for ceil_mode in [False, True]:
        for count_include_pad in [False, True]:
            for divisor in [None, 5]:
                add(AVGPOOL, {"self": T((1, 2, 9, 8), F32), "kernel_size": kernel,
                              "stride": stride, "padding": padding, "ceil_mode": ceil_mode,
                              "count_include_pad": count_include_pad,
                              "divisor_override": divisor})
# int64 divides with truncation toward zero (negative sums included).
add(AVGPOOL, {"self": T((1, 2, 5, 5), I64), "kernel_size": [2, 2], "stride": [2, 2],
              "padding": [1, 1], "ceil_mode": True, "count_include_pad": False}, name="int64-trunc")
add(AVGPOOL, {"self": T((1, 2, 5, 5), I64), "kernel_size": [3, 3], "divisor_override": -2},
    name="int64-negative-divisor")
add(AVGPOOL, {"self": T((3, 6, 5), F64), "kernel_size": [2], "stride": [1]}, name="3d-input")
add(AVGPOOL, {"self": T((2, 4, 6, 6), F32, dim_order=CL), "kernel_size": [3, 3], "stride": [2, 2],
              "padding": [1, 1], "count_include_pad": False}, name="channels-last")
add(AVGPOOL, {"self": T((2, 4, 6, 6), BF16, dim_order=CL), "kernel_size": [2, 2]},
    name="channels-last-bf16")
add(AVGPOOL, {"self": T((0, 2, 4, 4), F32), "kernel_size": [2, 2]}, name="empty-batch")
add(AVGPOOL, {"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2], "divisor_override": 0},
    expect_error="divisor_override", name="err-divisor-zero")
add(AVGPOOL, {"self": T((1, 1, 4, 4), I32), "kernel_size": [2, 2]}, expect_error="self",
    out_shapes=[(1, 1, 2, 2)], name="err-int32")
add(AVGPOOL, {"self": T((1, 1, 4, 4), F32), "kernel_size": [2, 2], "padding": [2, 2]},
    expect_error="padding", name="err-padding")
add(AVGPOOL, {"self": T((1, 1, 1, 4), F32), "kernel_size": [2, 2]}, expect_error="kernel_size",
    name="err-kernel-larger-than-input")

for op in [ADAPTIVE_AVG, ADAPTIVE_MAX]:
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((2, 3, 7, 6), dt), "output_size": [3, 4]})
    for out_size in [[1, 1], [7, 6], [2, 5], [10, 13], [0, 3]]:
        add(op, {"self": T((1, 2, 7, 6), F32), "output_size": out_size})
    add(op, {"self": T((3, 5, 9), F64), "output_size": [2, 4]}, name="3d-input")
    add(op, {"self": T((2, 4, 6, 5), F32, dim_order=CL), "output_size": [4, 3]},
        name="channels-last")
    add(op, {"self": T((0, 2, 4, 4), F32), "output_size": [2, 2]}, name="empty-batch")
    add(op, {"self": T((1, 1, 0, 4), F32), "output_size": [2, 2]}, expect_error="self",
        out_shapes=[(1, 1, 2, 2)] * (1 if op == ADAPTIVE_AVG else 2),
        out_dtype=F32 if op == ADAPTIVE_AVG else [F32, I64], name="err-empty-height")
    add(op, {"self": T((1, 1, 4, 4), F32), "output_size": [2]}, expect_error="output_size",
        out_shapes=[(1, 1, 2, 2)] * (1 if op == ADAPTIVE_AVG else 2),
        out_dtype=F32 if op == ADAPTIVE_AVG else [F32, I64], name="err-size-length")
    add(op, {"self": T((1, 1, 4, 4), F32), "output_size": [2, -1]}, expect_error="output_size",
        out_shapes=[(1, 1, 2, 2)] * (1 if op == ADAPTIVE_AVG else 2),
        out_dtype=F32 if op == ADAPTIVE_AVG else [F32, I64], name="err-negative-size")
    add(op, {"self": T((1, 1, 4, 4), I32), "output_size": [2, 2]}, expect_error="self",
        out_shapes=[(1, 1, 2, 2)] * (1 if op == ADAPTIVE_AVG else 2),
        out_dtype=I32 if op == ADAPTIVE_AVG else [I32, I64], name="err-int32")
add(ADAPTIVE_MAX, {"self": T((1, 1, 3, 3), F32, values=[[[[nan, 1, 2], [3, nan, 5], [6, 7, 8]]]]),
                   "output_size": [2, 2]}, name="nan")

# 1-D and 3-D pooling (core ATen operators; exports of nn.*Pool1d go
# through the 2-D ones, but programs may keep these).
MAXPOOL3D = "aten::max_pool3d_with_indices.out"
AVGPOOL3D = "aten::avg_pool3d.out"
AVGPOOL1D = "aten::avg_pool1d.out"
ADAPTIVE_AVG3D = "aten::_adaptive_avg_pool3d.out"
ADAPTIVE_AVG1D = "aten::adaptive_avg_pool1d.out"
for dt in REAL_DTYPES_NO_BOOL:
    add(MAXPOOL3D, {"self": T((2, 2, 5, 6, 4), dt), "kernel_size": [2, 3, 2], "stride": [2, 2, 1],
                    "padding": [1, 1, 0]})
for kernel, stride, padding, dilation, ceil_mode in [
        ([2], [], [0], [1], False), ([3, 2, 2], [1, 2, 2], [1, 0, 1], [1, 2, 1], True),
        ([2, 2, 2], [2], [1], [2], True)]:
    add(MAXPOOL3D, {"self": T((1, 2, 6, 5, 7), F32), "kernel_size": kernel, "stride": stride,
                    "padding": padding, "dilation": dilation, "ceil_mode": ceil_mode})
add(MAXPOOL3D, {"self": T((2, 4, 4, 4), F32, dim_order=(1, 2, 3, 0)), "kernel_size": [2]},
    name="4d-input-channels-last")
add(MAXPOOL3D, {"self": T((0, 2, 4, 4, 4), F32), "kernel_size": [2]}, name="empty-batch")
add(MAXPOOL3D, {"self": T((2, 4, 4), F32), "kernel_size": [2]}, expect_error="self",
    out_shapes=[(1, 2, 2)] * 2, out_dtype=[F32, I64], name="err-3d-input")
add(MAXPOOL3D, {"self": T((1, 1, 4, 4, 4), F32), "kernel_size": [2, 2]}, expect_error="kernel_size",
    out_shapes=[(1, 1, 2, 2, 2)] * 2, out_dtype=[F32, I64], name="err-kernel-length")
for dt in [F32, F64, I64]:
    add(AVGPOOL3D, {"self": T((2, 2, 5, 6, 4), dt), "kernel_size": [2, 3, 2], "stride": [2, 2, 1],
                    "padding": [1, 1, 0]})
for ceil_mode, count_include_pad, divisor in [(False, True, None), (True, False, None),
                                              (True, True, 7), (False, False, -3)]:
    add(AVGPOOL3D, {"self": T((1, 2, 5, 5, 6), F32), "kernel_size": [3, 2, 3], "stride": [2, 2, 2],
                    "padding": [1, 1, 1], "ceil_mode": ceil_mode,
                    "count_include_pad": count_include_pad, "divisor_override": divisor})
add(AVGPOOL3D, {"self": T((2, 4, 4, 4), F64, dim_order=(1, 2, 3, 0)), "kernel_size": [2]},
    name="4d-input-permuted")
add(AVGPOOL3D, {"self": T((1, 1, 4, 4, 4), F16), "kernel_size": [2]}, expect_error="self",
    out_shapes=[(1, 1, 2, 2, 2)], name="err-float16")
for dt in FLOAT_DTYPES + [I64]:
    add(AVGPOOL1D, {"self": T((2, 3, 9), dt), "kernel_size": [3], "stride": [2], "padding": [1]})
for ceil_mode, count_include_pad in [(False, False), (True, True), (True, False)]:
    add(AVGPOOL1D, {"self": T((3, 10), F32), "kernel_size": [4], "stride": [3], "padding": [2],
                    "ceil_mode": ceil_mode, "count_include_pad": count_include_pad})
add(AVGPOOL1D, {"self": T((2, 3, 9), F32, dim_order=(2, 0, 1)), "kernel_size": [2]},
    name="permuted")
add(AVGPOOL1D, {"self": T((1, 2, 6), F32), "kernel_size": [2, 2]}, expect_error="kernel_size",
    out_shapes=[(1, 2, 3)], name="err-kernel-length")
add(AVGPOOL1D, {"self": T((1, 2, 6), F32), "kernel_size": [4], "padding": [3]},
    expect_error="padding", out_shapes=[(1, 2, 3)], name="err-padding")
for dt in FLOAT_DTYPES:
    add(ADAPTIVE_AVG3D, {"self": T((2, 2, 5, 6, 4), dt), "output_size": [2, 4, 3]})
    add(ADAPTIVE_AVG1D, {"self": T((2, 3, 9), dt), "output_size": [4]})
add(ADAPTIVE_AVG3D, {"self": T((2, 4, 4, 4), F32), "output_size": [3, 5, 1]}, name="4d-input")
add(ADAPTIVE_AVG3D, {"self": T((1, 2, 3, 4, 5), F32, dim_order=(0, 2, 3, 4, 1)),
                     "output_size": [2, 2, 2]}, name="channels-last-3d")
add(ADAPTIVE_AVG3D, {"self": T((1, 1, 4, 4, 4), F32), "output_size": [2, 2]},
    expect_error="output_size", out_shapes=[(1, 1, 2, 2, 2)], name="err-size-length")
add(ADAPTIVE_AVG1D, {"self": T((3, 7), F64), "output_size": [10]}, name="2d-input-upsampling")
add(ADAPTIVE_AVG1D, {"self": T((2, 0), F32), "output_size": [4]}, expect_error="self",
    out_shapes=[(2, 4)], name="err-empty-length")


# ---------------------------------------------------------------- normalization

BN_EVAL = "aten::_native_batch_norm_legit_no_training.out"
BN_NO_STATS = "aten::_native_batch_norm_legit.no_stats_out"
BN_LEGIT = "aten::_native_batch_norm_legit.out"
BN_NATIVE = "aten::native_batch_norm.out"
LAYER_NORM = "aten::native_layer_norm.out"
GROUP_NORM = "aten::native_group_norm.out"


def bn_params(c, dt, weight=True, bias=True):
    return {"weight": T((c,), dt) if weight else None, "bias": T((c,), dt) if bias else None,
            "running_mean": T((c,), dt), "running_var": T((c,), dt, 0.5, 2.0)}


# Eval-mode BatchNorm: every float dtype, mixed (float32 parameters with
# float16/bfloat16 input), 2-D/3-D/4-D/5-D input, optional weight/bias.
for dt in FLOAT_DTYPES:
    add(BN_EVAL, dict(input=T((2, 3, 4, 5), dt), momentum=0.1, eps=1e-5, **bn_params(3, dt)))
for dt in [F16, BF16]:
    add(BN_EVAL, dict(input=T((2, 3, 4), dt), momentum=0.1, eps=1e-3, **bn_params(3, F32)),
        name=f"{dn(dt)}-f32-params")
for shape in [(4, 3), (2, 3, 7), (1, 3, 2, 2, 3), (0, 3, 4)]:
    add(BN_EVAL, dict(input=T(shape, F32), momentum=0.1, eps=1e-5, **bn_params(3, F32)))
add(BN_EVAL, dict(input=T((2, 3, 4), F32), momentum=0.1, eps=1e-5,
                  **bn_params(3, F32, weight=False, bias=False)), name="no-affine")
add(BN_EVAL, dict(input=T((2, 3, 4), F32), momentum=0.1, eps=1e-5,
                  **bn_params(3, F32, weight=True, bias=False)), name="weight-only")
add(BN_EVAL, dict(input=T((2, 4, 5, 3), F32, dim_order=CL), momentum=0.1, eps=1e-5,
                  **bn_params(4, F32)), name="channels-last")
add(BN_EVAL, dict(input=T((2, 4, 5, 3), F16, dim_order=CL), momentum=0.1, eps=1e-5,
                  **bn_params(4, F32)), name="channels-last-f16-f32-params")
add(BN_EVAL, dict(input=T((2, 3, 4), F32), momentum=0.1, eps=1e-5,
                  **dict(bn_params(3, F32), running_mean=T((4,), F32))),
    expect_error="running_mean", out_shapes=[(2, 3, 4), (0,), (0,)], name="err-channels")
add(BN_EVAL, dict(input=T((2, 3, 4), F32), momentum=0.1, eps=1e-5,
                  **dict(bn_params(3, F32), weight=T((3,), F64))),
    expect_error="weight", out_shapes=[(2, 3, 4), (0,), (0,)], name="err-param-dtype")
add(BN_EVAL, dict(input=T((2, 3, 4), F16), momentum=0.1, eps=1e-5,
                  **dict(bn_params(3, F16), weight=T((3,), F32))),
    expect_error="weight", out_shapes=[(2, 3, 4), (0,), (0,)], name="err-mixed-params")
add(BN_EVAL, dict(input=T((2, 3, 4), I32), momentum=0.1, eps=1e-5, **bn_params(3, I32)),
    expect_error="input", out_shapes=[(2, 3, 4), (0,), (0,)], name="err-int")
add(BN_EVAL, dict(input=T((3,), F32), momentum=0.1, eps=1e-5, **bn_params(3, F32)),
    expect_error="input", out_shapes=[(3,), (0,), (0,)], name="err-1d")

# Batch statistics (InstanceNorm, BatchNorm without running stats).
for dt in FLOAT_DTYPES:
    add(BN_NO_STATS, {"input": T((3, 2, 4, 5), dt), "weight": T((2,), dt), "bias": T((2,), dt),
                      "training": True, "momentum": 0.1, "eps": 1e-5})
add(BN_NO_STATS, {"input": T((3, 2, 4, 5), F16), "weight": T((2,), F32), "bias": T((2,), F32),
                  "training": True, "momentum": 0.1, "eps": 1e-5}, name="f16-f32-params")
add(BN_NO_STATS, {"input": T((1, 6, 9), F32), "weight": None, "bias": None, "training": True,
                  "momentum": 0.1, "eps": 1e-5}, name="instance-norm-shape")
add(BN_NO_STATS, {"input": T((2, 3, 4, 4), F32, dim_order=CL), "weight": None, "bias": T((3,), F32),
                  "training": True, "momentum": 0.1, "eps": 1e-3}, name="channels-last")
add(BN_NO_STATS, {"input": T((0, 3, 4), F32), "weight": None, "bias": None, "training": True,
                  "momentum": 0.1, "eps": 1e-5}, expect_error="input",
    out_shapes=[(0, 3, 4), (3,), (3,)], name="err-empty")


def _torch_crashes(*args):
    # torch 2.6 dereferences the missing running stats (segfault): don't call it.
    raise RuntimeError("no reference: torch crashes on this input")


add(BN_NO_STATS, {"input": T((2, 3, 4), F32), "weight": None, "bias": None, "training": False,
                  "momentum": 0.1, "eps": 1e-5}, expect_error="running_mean",
    out_shapes=[(2, 3, 4), (0,), (0,)], reference=_torch_crashes, name="err-eval-without-stats")

# _native_batch_norm_legit's running stats are mutable (Tensor(a!)), so
# schema matching finds no functional overload: call it directly.
REFERENCES = {BN_LEGIT: lambda *a: torch.ops.aten._native_batch_norm_legit.default(*a),
              BN_NATIVE: None}
# Training with running stats updates them in place, which the harness
# treats as a bug (it checks inputs are untouched): those updates are
# checked by op_native_batch_norm_test.cpp instead.
for op in [BN_LEGIT, BN_NATIVE]:
    add(op, dict(input=T((2, 3, 4, 2), F32), training=False, momentum=0.2, eps=1e-5,
                 **bn_params(3, F32)), reference=REFERENCES[op], name="eval")
    add(op, dict(input=T((2, 3, 4), BF16), training=False, momentum=0.2, eps=1e-5,
                 **bn_params(3, F32)), reference=REFERENCES[op], name="bf16-eval")
for dt in [F32, BF16]:
    add(BN_NATIVE, {"input": T((2, 3, 4, 2), dt), "weight": T((3,), F32), "bias": T((3,), F32),
                    "running_mean": None, "running_var": None, "training": True,
                    "momentum": 0.1, "eps": 1e-5}, name=f"{dn(dt)}-training")
add(BN_NATIVE, {"input": T((2, 3, 4), F64), "weight": T((3,), F64), "bias": None,
                "running_mean": None, "running_var": None, "training": True, "momentum": 0.1,
                "eps": 1e-5}, name="no-running-stats")

# LayerNorm: dtypes, mixed parameters, several normalized ranks, layouts.
for dt in FLOAT_DTYPES:
    add(LAYER_NORM, {"input": T((2, 3, 8), dt), "normalized_shape": [8], "weight": T((8,), dt),
                     "bias": T((8,), dt), "eps": 1e-5})
for dt in [F16, BF16]:
    add(LAYER_NORM, {"input": T((4, 6), dt), "normalized_shape": [6], "weight": T((6,), F32),
                     "bias": T((6,), F32), "eps": 1e-5}, name=f"{dn(dt)}-f32-params")
    add(LAYER_NORM, {"input": T((4, 6), dt), "normalized_shape": [6], "weight": None,
                     "bias": None, "eps": 1e-5}, name=f"{dn(dt)}-no-affine")
add(LAYER_NORM, {"input": T((2, 3, 4), F32), "normalized_shape": [3, 4], "weight": T((3, 4), F32),
                 "bias": None, "eps": 1e-6}, name="2d-normalized")
add(LAYER_NORM, {"input": T((2, 3, 4), F64), "normalized_shape": [2, 3, 4], "weight": None,
                 "bias": T((2, 3, 4), F64), "eps": 1e-5}, name="all-dims")
add(LAYER_NORM, {"input": T((5, 768), F32, -10, 10), "normalized_shape": [768],
                 "weight": T((768,), F32), "bias": T((768,), F32), "eps": 1e-5}, name="wide-row")
add(LAYER_NORM, {"input": T((3, 4, 5), F32, dim_order=(2, 0, 1)), "normalized_shape": [5],
                 "weight": T((5,), F32), "bias": T((5,), F32), "eps": 1e-5}, name="permuted")
add(LAYER_NORM, {"input": T((2, 3, 4), F32, dim_order=(1, 0, 2)), "normalized_shape": [4],
                 "weight": T((4,), F32), "bias": None, "eps": 1e-5}, name="permuted-lead")
add(LAYER_NORM, {"input": T((0, 4), F32), "normalized_shape": [4], "weight": None, "bias": None,
                 "eps": 1e-5}, name="no-rows")
add(LAYER_NORM, {"input": T((2, 3, 0), F32), "normalized_shape": [0], "weight": None,
                 "bias": None, "eps": 1e-5}, name="empty-rows")
add(LAYER_NORM, {"input": T((2, 4), F32, values=[[1, 1, 1, 1], [1e6, -1e6, 1e6, -1e6]]),
                 "normalized_shape": [4], "weight": None, "bias": None, "eps": 1e-5},
    name="constant-and-large")
add(LAYER_NORM, {"input": T((2, 3), F32), "normalized_shape": [4], "weight": None, "bias": None,
                 "eps": 1e-5}, expect_error="normalized_shape", out_shapes=[(2, 3), (2, 1), (2, 1)],
    name="err-shape")
add(LAYER_NORM, {"input": T((2, 3), F32), "normalized_shape": [3], "weight": T((4,), F32),
                 "bias": None, "eps": 1e-5}, expect_error="weight",
    out_shapes=[(2, 3), (2, 1), (2, 1)], name="err-weight-shape")
add(LAYER_NORM, {"input": T((2, 3), F32), "normalized_shape": [], "weight": None, "bias": None,
                 "eps": 1e-5}, expect_error="normalized_shape", out_shapes=[(2, 3), (2, 3), (2, 3)],
    name="err-empty-normalized-shape")
add(LAYER_NORM, {"input": T((2, 3), F16), "normalized_shape": [3], "weight": T((3,), F32),
                 "bias": T((3,), F16), "eps": 1e-5}, expect_error="bias",
    out_shapes=[(2, 3), (2, 1), (2, 1)], out_dtype=[F16, F32, F32], name="err-mixed-params")
add(LAYER_NORM, {"input": T((2, 3), I64), "normalized_shape": [3], "weight": None, "bias": None,
                 "eps": 1e-5}, expect_error="input", out_shapes=[(2, 3), (2, 1), (2, 1)],
    name="err-int")

# GroupNorm: dtypes, mixed parameters, shapes, channels-last, the flat
# [N, C, HxW] reading when the dims do not match N and C.
for dt in FLOAT_DTYPES:
    add(GROUP_NORM, {"input": T((2, 6, 3, 4), dt), "weight": T((6,), dt), "bias": T((6,), dt),
                     "N": 2, "C": 6, "HxW": 12, "group": 3, "eps": 1e-5})
for dt in [F16, BF16]:
    add(GROUP_NORM, {"input": T((2, 4, 5), dt), "weight": T((4,), F32), "bias": None,
                     "N": 2, "C": 4, "HxW": 5, "group": 2, "eps": 1e-5},
        name=f"{dn(dt)}-f32-params")
for groups in [1, 2, 4]:
    add(GROUP_NORM, {"input": T((3, 4, 7), F32), "weight": None, "bias": T((4,), F32), "N": 3,
                     "C": 4, "HxW": 7, "group": groups, "eps": 1e-5})
add(GROUP_NORM, {"input": T((2, 4), F32), "weight": T((4,), F32), "bias": T((4,), F32), "N": 2,
                 "C": 4, "HxW": 1, "group": 2, "eps": 1e-5}, name="2d-input")
add(GROUP_NORM, {"input": T((2, 6, 3, 4), F32, dim_order=CL), "weight": T((6,), F32),
                 "bias": T((6,), F32), "N": 2, "C": 6, "HxW": 12, "group": 2, "eps": 1e-5},
    name="channels-last")
add(GROUP_NORM, {"input": T((2, 4, 3, 2), F32), "weight": None, "bias": None, "N": 3, "C": 4,
                 "HxW": 4, "group": 2, "eps": 1e-5}, name="flat-reading")
add(GROUP_NORM, {"input": T((0, 4, 3), F32), "weight": None, "bias": None, "N": 0, "C": 4,
                 "HxW": 3, "group": 2, "eps": 1e-5}, name="empty-batch")
add(GROUP_NORM, {"input": T((2, 4, 0), F32), "weight": None, "bias": None, "N": 2, "C": 4,
                 "HxW": 0, "group": 2, "eps": 1e-5}, name="empty-groups")
add(GROUP_NORM, {"input": T((2, 4, 3), F32), "weight": None, "bias": None, "N": 2, "C": 4,
                 "HxW": 3, "group": 3, "eps": 1e-5}, expect_error="group",
    out_shapes=[(2, 4, 3), (2, 3), (2, 3)], name="err-group")
add(GROUP_NORM, {"input": T((2, 4, 3), F32), "weight": None, "bias": None, "N": 2, "C": 4,
                 "HxW": 4, "group": 2, "eps": 1e-5}, expect_error="input",
    out_shapes=[(2, 4, 3), (2, 2), (2, 2)], name="err-numel")
add(GROUP_NORM, {"input": T((2, 4, 3), F32), "weight": T((3,), F32), "bias": None, "N": 2,
                 "C": 4, "HxW": 3, "group": 2, "eps": 1e-5}, expect_error="weight",
    out_shapes=[(2, 4, 3), (2, 2), (2, 2)], name="err-weight-shape")


# ---------------------------------------------------------------- embedding

EMBEDDING = "aten::embedding.out"
for dt in ALL_DTYPES:
    add(EMBEDDING, {"weight": T((10, 4), dt), "indices": T((2, 3), I64, 0, 10)})
for idx_dt in [I32, I64]:
    add(EMBEDDING, {"weight": T((7, 3), F32), "indices": T((5,), idx_dt, 0, 7)},
        name=f"{dn(idx_dt)}-indices")
add(EMBEDDING, {"weight": T((7, 3), F32), "indices": T((), I64, values=4)}, name="0d-indices")
add(EMBEDDING, {"weight": T((7, 3), F32), "indices": T((2, 0), I64)}, name="no-indices")
add(EMBEDDING, {"weight": T((0, 3), F32), "indices": T((0,), I64)}, name="empty-weight")
add(EMBEDDING, {"weight": T((7, 3), F32, dim_order=(1, 0)),
                "indices": T((3, 2), I32, 0, 7, dim_order=(1, 0))}, name="transposed")
add(EMBEDDING, {"weight": T((50, 16), F32), "indices": T((2, 8), I64, 0, 50), "padding_idx": 3},
    name="padding-idx")
add(EMBEDDING, {"weight": T((5, 3), F32), "indices": T((2,), I64, values=[1, 5])},
    expect_error="indices", out_shapes=[(2, 3)], name="err-index-too-large")
add(EMBEDDING, {"weight": T((5, 3), F32), "indices": T((2,), I64, values=[-1, 0])},
    expect_error="indices", out_shapes=[(2, 3)], name="err-negative-index")
add(EMBEDDING, {"weight": T((5, 3), F32), "indices": T((2,), F32)}, expect_error="indices",
    out_shapes=[(2, 3)], name="err-float-indices")
add(EMBEDDING, {"weight": T((5,), F32), "indices": T((2,), I64, 0, 5)}, expect_error="weight",
    out_shapes=[(2, 1)], name="err-1d-weight")


# ---------------------------------------------------------------- upsampling

NEAREST = "aten::upsample_nearest2d.vec_out"
BILINEAR = "aten::upsample_bilinear2d.vec_out"
UP_DTYPES = [torch.uint8, F32, F64, F16, BF16]



def uint8_bilinear_reference(x, output_size, align_corners, scale_factors):
    """ATen computes uint8 bilinear with fixed-point weights, which can differ
    by 1 from exact arithmetic; the kernel computes in double and rounds to
    nearest, so the reference is torch's float64 result rounded."""
    y = torch.ops.aten.upsample_bilinear2d.vec(x.double(), output_size, align_corners,
                                               scale_factors)
    return torch.floor(y + 0.5).clamp(0, 255).to(torch.uint8)


for dt in UP_DTYPES:
    add(NEAREST, {"input": T((2, 3, 4, 5), dt), "output_size": None, "scale_factors": [2.0, 2.0]})
    for ac in [False, True]:
        is_u8 = dt == torch.uint8
        add(BILINEAR, {"input": T((2, 3, 4, 5), dt, 0, 200) if is_u8 else T((2, 3, 4, 5), dt),
                       "output_size": [7, 9], "align_corners": ac, "scale_factors": None},
            reference=uint8_bilinear_reference if is_u8 else None, name=f"{dn(dt)}-ac{ac}")
for size in [[4, 5], [8, 10], [3, 7], [1, 1], [9, 2], [13, 17]]:
    add(NEAREST, {"input": T((1, 2, 4, 5), F32), "output_size": size, "scale_factors": None})
    for ac in [False, True]:
        add(BILINEAR, {"input": T((1, 2, 4, 5), F32), "output_size": size, "align_corners": ac,
                       "scale_factors": None})
for scales in [[2.0, 3.0], [1.5, 0.5], [0.7, 2.3], [1.0, 1.0], [3.3, 1.25]]:
    add(NEAREST, {"input": T((1, 2, 4, 6), F32), "output_size": None, "scale_factors": scales})
    for ac in [False, True]:
        add(BILINEAR, {"input": T((1, 2, 4, 6), F32), "output_size": None, "align_corners": ac,
                       "scale_factors": scales})
add(NEAREST, {"input": T((2, 3, 4, 5), F32, dim_order=CL), "output_size": [6, 11],
              "scale_factors": None}, name="channels-last")
add(BILINEAR, {"input": T((2, 3, 4, 5), F32, dim_order=CL), "output_size": [6, 11],
               "align_corners": False, "scale_factors": None}, name="channels-last")
add(BILINEAR, {"input": T((1, 4, 3, 3), torch.uint8, dim_order=CL), "output_size": [5, 7],
               "align_corners": True, "scale_factors": None}, reference=uint8_bilinear_reference,
    name="channels-last-u8")
add(NEAREST, {"input": T((0, 3, 4, 5), F32), "output_size": [8, 10], "scale_factors": None},
    name="empty-batch")
add(BILINEAR, {"input": T((0, 3, 4, 5), F32), "output_size": [8, 10], "align_corners": False,
               "scale_factors": None}, name="empty-batch")
for op, extra in [(NEAREST, {}), (BILINEAR, {"align_corners": False})]:
    add(op, dict({"input": T((1, 2, 3, 4), F32), "output_size": None, "scale_factors": None},
                 **extra),
        expect_error="output_size", out_shapes=[(1, 2, 3, 4)], name="err-neither")
    add(op, dict({"input": T((1, 2, 3, 4), F32), "output_size": [6, 8],
                  "scale_factors": [2.0, 2.0]}, **extra),
        expect_error="scale_factors", out_shapes=[(1, 2, 6, 8)], name="err-both")
    add(op, dict({"input": T((1, 2, 3, 4), F32), "output_size": [6], "scale_factors": None},
                 **extra),
        expect_error="output_size", out_shapes=[(1, 2, 6, 6)], name="err-size-count")
    add(op, dict({"input": T((1, 2, 3, 4), F32), "output_size": None, "scale_factors": [0.1, 0.1]},
                 **extra), expect_error="scale_factors", out_shapes=[(1, 2, 1, 1)],
        name="err-zero-size")
    add(op, dict({"input": T((2, 3, 4), F32), "output_size": [6, 8], "scale_factors": None},
                 **extra),
        expect_error="input", out_shapes=[(2, 6, 8)], name="err-3d-input")
    add(op, dict({"input": T((1, 2, 3, 4), I32), "output_size": [6, 8], "scale_factors": None},
                 **extra),
        expect_error="input", out_shapes=[(1, 2, 6, 8)], name="err-int32")


# ---------------------------------------------------------------- pixel shuffle

SHUFFLE = "aten::pixel_shuffle.out"
UNSHUFFLE = "aten::pixel_unshuffle.out"
for dt in ALL_DTYPES:
    add(SHUFFLE, {"self": T((2, 8, 3, 2), dt), "upscale_factor": 2})
    add(UNSHUFFLE, {"self": T((2, 2, 4, 6), dt), "downscale_factor": 2})
add(SHUFFLE, {"self": T((9, 2, 3), F32), "upscale_factor": 3}, name="3d-input")
add(SHUFFLE, {"self": T((2, 3, 4, 2, 2), F32), "upscale_factor": 1}, name="5d-factor-1")
add(SHUFFLE, {"self": T((1, 8, 3, 2), F32, dim_order=CL), "upscale_factor": 2},
    name="channels-last")
add(SHUFFLE, {"self": T((0, 4, 2, 2), F32), "upscale_factor": 2}, name="empty-batch")
add(UNSHUFFLE, {"self": T((3, 6, 9), I64), "downscale_factor": 3}, name="3d-input")
add(UNSHUFFLE, {"self": T((1, 2, 4, 6), F32, dim_order=CL), "downscale_factor": 2},
    name="channels-last")
add(UNSHUFFLE, {"self": T((1, 0, 4, 6), F32), "downscale_factor": 2}, name="no-channels")
add(SHUFFLE, {"self": T((1, 6, 2, 2), F32), "upscale_factor": 2}, expect_error="self",
    out_shapes=[(1, 1, 4, 4)], name="err-channels")
add(SHUFFLE, {"self": T((1, 8, 2, 2), F32), "upscale_factor": 0}, expect_error="upscale_factor",
    out_shapes=[(1, 8, 2, 2)], name="err-factor")
add(SHUFFLE, {"self": T((8, 2), F32), "upscale_factor": 2}, expect_error="self",
    out_shapes=[(8, 2)], name="err-rank")
add(UNSHUFFLE, {"self": T((1, 2, 5, 6), F32), "downscale_factor": 2}, expect_error="self",
    out_shapes=[(1, 8, 2, 3)], name="err-height")
add(UNSHUFFLE, {"self": T((1, 2, 4, 6), F32), "downscale_factor": -1},
    expect_error="downscale_factor", out_shapes=[(1, 2, 4, 6)], name="err-factor")
add(UNSHUFFLE, {"self": T((1, 2, 0, 6), F32), "downscale_factor": 2}, name="empty-keeps-shape")
