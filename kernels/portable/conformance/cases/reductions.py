"""Conformance cases for the reductions: sum, prod, mean, amax/amin,
argmax/argmin, var/std, any/all, cumsum, logsumexp, _softmax/_log_softmax.

Each op gets: every dtype torch supports for it, dim lists (None, [], one
dim, several, negative), keepdim, its dtype argument, 0-d and empty tensors,
permuted (non-contiguous) layouts, an out that must be resized, and error
cases naming the argument at fault.
"""

import torch

from conformance.spec import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, REAL_DTYPES_NO_BOOL, Case,
                              T)

NAN = float("nan")
INF = float("inf")
f32 = torch.float32

CASES = []


def add(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# Shapes and dim lists every dim-list reduction runs through (float32).
DIM_VARIANTS = [
    ((2, 3, 4), None, False),
    ((2, 3, 4), [], False),
    ((2, 3, 4), [1], False),
    ((2, 3, 4), [1], True),
    ((2, 3, 4), [-1], False),
    ((2, 3, 4), [0, 2], False),
    ((2, 3, 4), [2, 0], True),
    ((2, 3, 4), [0, 1, 2], True),
    ((5,), [0], False),
    ((), None, False),
    ((), [0], False),
    ((), [-1], True),
    ((0, 3), [1], False),
    ((0, 3), [1], True),
]

# Values with zeros, for any/all (bool, ints and floats alike).
ZERO_PATTERN = [[0, 1, 0, 0], [0, 0, 0, 0], [2, 3, 1, 5]]

# ---------------------------------------------------------------------------
# sum.IntList_out / sum.out

SUM = "aten::sum.IntList_out"
for dt in ALL_DTYPES:
    add(SUM, {"self": T((2, 3, 4), dt), "dim": [1]})
    add(SUM, {"self": T((3, 5), dt), "dim": None, "keepdim": True})
for shape, dim, keepdim in DIM_VARIANTS:
    add(SUM, {"self": T(shape, f32), "dim": dim, "keepdim": keepdim})
add(SUM, {"self": T((0, 3), f32), "dim": [0]}, name="empty reduction is 0")
add(SUM, {"self": T((0, 3), torch.int32), "dim": None}, name="empty int is 0")
add(SUM, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": [1]})
add(SUM, {"self": T((2, 3, 4, 5), torch.float64, dim_order=(0, 2, 3, 1)), "dim": [1, 3],
          "keepdim": True})
add(SUM, {"self": T((2, 3, 4), torch.int16, dim_order=(2, 0, 1)), "dim": [0, 2]})
add(SUM, {"self": T((1000,), f32), "dim": [0]}, name="long f32")
add(SUM, {"self": T((300,), torch.float16, low=0, high=1), "dim": [0]}, name="long f16")
add(SUM, {"self": T((300,), torch.bfloat16, low=0, high=1), "dim": [0]}, name="long bf16")
# The dtype argument, and outs whose dtype decides (ATen converts each
# element to out's dtype before summing: 1.7 + 2.6 into int32 is 3).
add(SUM, {"self": T((2, 3), torch.int32), "dim": [1], "dtype": torch.float64})
add(SUM, {"self": T((2, 3), torch.float16), "dim": [1], "dtype": f32})
add(SUM, {"self": T((2, 3), f32), "dim": [0], "dtype": torch.int64})
add(SUM, {"self": T((2, 3), torch.bool), "dim": [1], "dtype": torch.bool})
add(SUM, {"self": T((2, 3), torch.int32), "dim": [1]}, out_dtype=torch.int32)
add(SUM, {"self": T((2, 3), torch.int8, low=100, high=127), "dim": [1]}, out_dtype=torch.int8,
    name="int8 wraps")
add(SUM, {"self": T((2,), f32, values=[1.7, 2.6]), "dim": [0]}, out_dtype=torch.int32,
    name="float into int32 truncates each element")
add(SUM, {"self": T((2, 3), torch.int32), "dim": [1]}, out_dtype=f32)
add(SUM, {"self": T((2, 3), f32, values=[[1, NAN, 2], [INF, 1, -INF]]), "dim": [1]})
add(SUM, {"self": T((2, 3, 4), f32), "dim": [1]}, out_shapes=[(1, 1)], name="out resized")
add(SUM, {"self": T((2, 3), f32), "dim": [2]}, expect_error="dim")
add(SUM, {"self": T((2, 3), f32), "dim": [1, -1]}, expect_error="dim")
add(SUM, {"self": T((2, 3), f32), "dim": [1], "dtype": torch.float64}, out_dtype=f32,
    expect_error="out")
add(SUM, {"self": T((2, 3), f32), "dim": [1]}, out_shapes=[(2, 1)], expect_error="out",
    name="out rank differs")

for dt in ALL_DTYPES:
    add("aten::sum.out", {"self": T((3, 4), dt)})
add("aten::sum.out", {"self": T((), torch.int64)})
add("aten::sum.out", {"self": T((0, 4), f32)})
add("aten::sum.out", {"self": T((2, 3), torch.int8), "dtype": torch.float64})
add("aten::sum.out", {"self": T((2, 3), f32), "dtype": torch.float64}, out_dtype=f32,
    expect_error="dtype")

# ---------------------------------------------------------------------------
# prod.int_out / prod.out

PROD = "aten::prod.int_out"
for dt in ALL_DTYPES:
    low, high = (0.5, 1.5) if dt.is_floating_point else (None, None)
    add(PROD, {"self": T((2, 3, 4), dt, low=low, high=high), "dim": 1})
for dim, keepdim in [(0, False), (-1, True), (2, False)]:
    add(PROD, {"self": T((2, 3, 4), f32), "dim": dim, "keepdim": keepdim})
add(PROD, {"self": T((), f32), "dim": 0})
add(PROD, {"self": T((0, 3), f32), "dim": 0}, name="empty product is 1")
add(PROD, {"self": T((2, 3, 4), f32, dim_order=(2, 0, 1)), "dim": 1})
add(PROD, {"self": T((2, 3), torch.int32), "dim": 1, "dtype": torch.float64})
add(PROD, {"self": T((2, 3), torch.int32, low=1000, high=5000), "dim": 1},
    out_dtype=torch.int32, name="int32 wraps")
add(PROD, {"self": T((2, 3), f32), "dim": 2}, expect_error="dim")
for dt in [f32, torch.int64, torch.bool, torch.bfloat16]:
    add("aten::prod.out", {"self": T((2, 3), dt, low=0.5 if dt.is_floating_point else None,
                                     high=1.5 if dt.is_floating_point else None)})
add("aten::prod.out", {"self": T((), torch.int16)})

# ---------------------------------------------------------------------------
# mean.out / mean.dtype_out

MEAN = "aten::mean.out"
for dt in FLOAT_DTYPES:
    add(MEAN, {"self": T((2, 3, 4), dt), "dim": [1]})
    add(MEAN, {"self": T((4, 5), dt), "dim": None, "keepdim": True})
for shape, dim, keepdim in DIM_VARIANTS:
    add(MEAN, {"self": T(shape, f32), "dim": dim, "keepdim": keepdim})
add(MEAN, {"self": T((0, 3), f32), "dim": [0]}, name="empty mean is NaN")
add(MEAN, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": [2, 3], "keepdim": True})
add(MEAN, {"self": T((300,), torch.float16, low=0, high=1), "dim": [0]}, name="long f16")
for dt in INT_DTYPES + [torch.bool]:
    add(MEAN, {"self": T((2, 3), dt), "dim": [1], "dtype": f32})
add(MEAN, {"self": T((2, 3), f32), "dim": [1], "dtype": torch.float64})
add(MEAN, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.float64)
add(MEAN, {"self": T((2, 3), torch.bfloat16), "dim": [0]}, out_dtype=f32)
add(MEAN, {"self": T((2, 3), torch.int64), "dim": [1]}, out_dtype=f32, expect_error="self",
    name="integer self without dtype")
add(MEAN, {"self": T((2, 3), torch.int64), "dim": [1], "dtype": torch.int32},
    out_dtype=torch.int32, expect_error="dtype")
add(MEAN, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.int64, out_shapes=[(2,)],
    expect_error="out")
add(MEAN, {"self": T((2, 3), f32), "dim": [-3]}, expect_error="dim")
add("aten::mean.dtype_out", {"self": T((3, 4), f32)})
add("aten::mean.dtype_out", {"self": T((3, 4), torch.int16), "dtype": torch.float64})
add("aten::mean.dtype_out", {"self": T((), torch.bfloat16)})

# ---------------------------------------------------------------------------
# amax.out / amin.out

for op in ["aten::amax.out", "aten::amin.out"]:
    for dt in ALL_DTYPES:
        add(op, {"self": T((2, 3, 4), dt), "dim": [1]})
        add(op, {"self": T((3, 4), dt), "dim": [], "keepdim": True})
    for shape, dim, keepdim in DIM_VARIANTS:
        add(op, {"self": T(shape, f32), "dim": [] if dim is None else dim, "keepdim": keepdim})
    add(op, {"self": T((2, 3, 4, 5), torch.int32, dim_order=(0, 2, 3, 1)), "dim": [1, 2]})
    add(op, {"self": T((2, 4), f32, values=[[1, NAN, 2, 3], [-INF, 0, INF, 1]]), "dim": [1]},
        name="NaN propagates")
    add(op, {"self": T((2, 4), torch.float16, values=[[NAN, 1, 2, NAN], [4, 3, 2, 1]]),
             "dim": [0]})
    add(op, {"self": T((0, 3), f32), "dim": [0]}, expect_error="dim", name="empty dim")
    add(op, {"self": T((0, 3), f32), "dim": []}, out_shapes=[()], expect_error="self",
        name="empty all")
    add(op, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.float64, out_shapes=[(2,)],
        expect_error="out")
    add(op, {"self": T((2, 3), f32), "dim": [0, 0]}, expect_error="dim")

# ---------------------------------------------------------------------------
# argmax.out / argmin.out

for op in ["aten::argmax.out", "aten::argmin.out"]:
    for dt in REAL_DTYPES_NO_BOOL:
        # Small int ranges make ties, where the first index must win.
        add(op, {"self": T((3, 5), dt, low=-2, high=2) if not dt.is_floating_point
                 else T((3, 5), dt), "dim": 1})
        add(op, {"self": T((2, 3, 4), dt), "dim": None})
    for dim, keepdim in [(None, True), (0, False), (-1, True), (2, False), (1, True)]:
        add(op, {"self": T((2, 3, 4), f32), "dim": dim, "keepdim": keepdim})
    add(op, {"self": T((), f32), "dim": None})
    add(op, {"self": T((), torch.int32), "dim": 0, "keepdim": True})
    add(op, {"self": T((0, 3), f32), "dim": 0, "keepdim": True}, out_dtype=torch.int64,
        out_shapes=[(1, 3)], expect_error="dim", name="empty dim")
    add(op, {"self": T((0, 3), f32), "dim": 1}, name="empty kept dim")
    add(op, {"self": T((0, 3), f32), "dim": None}, out_shapes=[()], out_dtype=torch.int64,
        expect_error="self", name="empty all")
    add(op, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": 1})
    add(op, {"self": T((2, 3, 4), torch.int64, dim_order=(2, 1, 0)), "dim": None})
    add(op, {"self": T((2, 5), f32, values=[[1, NAN, 3, NAN, 0], [2, 2, -1, -1, 2]]), "dim": 1},
        name="first NaN and first tie win")
    add(op, {"self": T((2, 3), torch.bool), "dim": 1}, out_dtype=torch.int64, out_shapes=[(2,)],
        expect_error="self")
    add(op, {"self": T((2, 3), f32), "dim": 1}, out_dtype=torch.int32, expect_error="out")
    add(op, {"self": T((2, 3), f32), "dim": 2}, out_dtype=torch.int64, out_shapes=[(2,)],
        expect_error="dim")

# ---------------------------------------------------------------------------
# var / std (correction_out and out)

for op in ["aten::var.correction_out", "aten::std.correction_out"]:
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((3, 5), dt), "dim": [1]})
        add(op, {"self": T((2, 3, 4), dt), "dim": None, "correction": 0, "keepdim": True})
    for shape, dim, keepdim in DIM_VARIANTS:
        add(op, {"self": T(shape, f32), "dim": dim, "keepdim": keepdim})
    for correction in [0, 2, 0.5, 5]:
        add(op, {"self": T((2, 4), f32), "dim": [1], "correction": correction})
    add(op, {"self": T((1, 3), f32), "dim": [0]}, name="one element: NaN")
    add(op, {"self": T((2, 3, 4, 5), torch.float64, dim_order=(0, 2, 3, 1)), "dim": [1, 3]})
    add(op, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.float64)
    add(op, {"self": T((2, 3), torch.int32), "dim": [1]}, out_dtype=f32, expect_error="self")
    add(op, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.int64, out_shapes=[(2,)],
        expect_error="out")
for op in ["aten::var.out", "aten::std.out"]:
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((3, 4), dt), "dim": [0], "unbiased": False})
    add(op, {"self": T((3, 4), f32), "dim": None, "unbiased": True, "keepdim": True})
    add(op, {"self": T((3, 4), f32), "dim": [-1], "unbiased": True})

# ---------------------------------------------------------------------------
# any / all

for name in ["any", "all"]:
    for dt in ALL_DTYPES:
        add(f"aten::{name}.out", {"self": T((3, 4), dt, values=ZERO_PATTERN), "dim": 1})
        add(f"aten::{name}.dims_out", {"self": T((3, 4), dt, values=ZERO_PATTERN), "dim": [0]})
        add(f"aten::{name}.all_out", {"self": T((3, 4), dt, values=ZERO_PATTERN)})
    add(f"aten::{name}.all_out", {"self": T((3, 4), torch.int8, low=0, high=2)})
    add(f"aten::{name}.all_out", {"self": T((3, 4), f32, values=[[1] * 4] * 3)}, name="all ones")
    add(f"aten::{name}.all_out", {"self": T((0,), f32)}, name="empty")
    add(f"aten::{name}.all_out", {"self": T((), torch.bool, values=False)})
    for shape, dim, keepdim in DIM_VARIANTS:
        add(f"aten::{name}.dims_out", {"self": T(shape, torch.int32, low=0, high=2), "dim": dim,
                                       "keepdim": keepdim})
    add(f"aten::{name}.out", {"self": T((2, 3, 4), torch.bool), "dim": -2, "keepdim": True})
    add(f"aten::{name}.out", {"self": T((), f32), "dim": 0})
    add(f"aten::{name}.out", {"self": T((0, 3), f32), "dim": 0}, name="empty reduction")
    add(f"aten::{name}.out", {"self": T((2, 3, 4, 5), torch.bool, dim_order=(0, 2, 3, 1)),
                              "dim": 1})
    add(f"aten::{name}.out", {"self": T((2, 2), f32, values=[[NAN, 0], [0, 0]]), "dim": 1},
        name="NaN is nonzero")
    add(f"aten::{name}.out", {"self": T((2, 3), f32), "dim": 1}, out_dtype=torch.uint8)
    add(f"aten::{name}.out", {"self": T((2, 3), torch.uint8), "dim": 1}, out_dtype=torch.bool)
    add(f"aten::{name}.out", {"self": T((2, 3), f32), "dim": 1}, out_dtype=f32,
        out_shapes=[(2,)], expect_error="out")
    add(f"aten::{name}.dims_out", {"self": T((2, 3), f32), "dim": [5]},
        out_dtype=torch.bool, out_shapes=[(2,)], expect_error="dim")

# ---------------------------------------------------------------------------
# cumsum.out

CUMSUM = "aten::cumsum.out"
for dt in ALL_DTYPES:
    add(CUMSUM, {"self": T((3, 4), dt), "dim": 1})
for shape, dim in [((2, 3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((5,), 0), ((), 0),
                   ((), -1), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1)]:
    add(CUMSUM, {"self": T(shape, f32), "dim": dim})
add(CUMSUM, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": 1})
add(CUMSUM, {"self": T((2, 3, 4), torch.int32, dim_order=(2, 1, 0)), "dim": 2})
add(CUMSUM, {"self": T((200,), torch.float16, low=0, high=1), "dim": 0}, rtol=2e-3,
    name="long f16")
add(CUMSUM, {"self": T((2, 3), torch.int32), "dim": 1, "dtype": torch.float64})
add(CUMSUM, {"self": T((2, 3), f32), "dim": 1, "dtype": torch.int64})
add(CUMSUM, {"self": T((2, 3), torch.int32), "dim": 1}, out_dtype=torch.int32)
add(CUMSUM, {"self": T((2, 3), torch.int8, low=100, high=127), "dim": 1}, out_dtype=torch.int8,
    name="int8 wraps")
add(CUMSUM, {"self": T((2, 3), f32), "dim": 1}, out_dtype=torch.float64)
add(CUMSUM, {"self": T((4,), f32, values=[1, NAN, 2, INF]), "dim": 0})
add(CUMSUM, {"self": T((2, 3), f32), "dim": 2}, expect_error="dim")
add(CUMSUM, {"self": T((2, 3), f32), "dim": 1, "dtype": torch.float64}, out_dtype=f32,
    expect_error="out")

# ---------------------------------------------------------------------------
# logsumexp.out

LSE = "aten::logsumexp.out"
for dt in FLOAT_DTYPES:
    add(LSE, {"self": T((3, 5), dt), "dim": [1]})
for dt in INT_DTYPES + [torch.bool]:
    add(LSE, {"self": T((3, 5), dt), "dim": [1]})
for shape, dim, keepdim in DIM_VARIANTS:
    if dim is None or (dim == [] and not keepdim):
        continue  # dim is required; ATen fails for [] without keepdim.
    add(LSE, {"self": T(shape, f32), "dim": dim, "keepdim": keepdim})
add(LSE, {"self": T((0, 3), f32), "dim": [0]}, name="empty is -inf")
add(LSE, {"self": T((2, 3), f32, values=[[INF, 1, 2], [-INF, -INF, -INF]]), "dim": [1]},
    name="infinities")
add(LSE, {"self": T((2, 3), f32, values=[[NAN, 1, 2], [100, 100, 100]]), "dim": [1]})
add(LSE, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": [1]})
add(LSE, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.float64)
add(LSE, {"self": T((2, 3), torch.int64), "dim": [1]}, out_dtype=torch.float64)
add(LSE, {"self": T((2, 3), f32), "dim": [1]}, out_dtype=torch.int64, out_shapes=[(2,)],
    expect_error="out")
add(LSE, {"self": T((2, 3), f32), "dim": [3]}, expect_error="dim")

# ---------------------------------------------------------------------------
# _softmax.out / _log_softmax.out

for op in ["aten::_softmax.out", "aten::_log_softmax.out"]:
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((3, 5), dt), "dim": 1, "half_to_float": False})
        add(op, {"self": T((2, 3, 4), dt), "dim": 0, "half_to_float": False})
    for shape, dim in [((2, 3, 4), -1), ((2, 3, 4), 1), ((7,), 0), ((), 0), ((), -1),
                       ((0, 3), 1), ((0, 3), 0)]:
        add(op, {"self": T(shape, f32), "dim": dim, "half_to_float": False})
    add(op, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": 1,
             "half_to_float": False})
    add(op, {"self": T((2, 3, 4), torch.float64, dim_order=(2, 0, 1)), "dim": 2,
             "half_to_float": False})
    add(op, {"self": T((3, 4), f32, low=-50, high=50), "dim": 1, "half_to_float": False},
        name="wide range")
    add(op, {"self": T((2, 3), f32, values=[[-INF, 0, 1], [NAN, 1, 2]]), "dim": 1,
             "half_to_float": False})
    add(op, {"self": T((2, 3), torch.int64), "dim": 1, "half_to_float": False},
        expect_error="self")
    add(op, {"self": T((2, 3), torch.float16), "dim": 1, "half_to_float": True},
        expect_error="half_to_float")
    add(op, {"self": T((2, 3), f32), "dim": 1, "half_to_float": False},
        out_dtype=torch.float64, expect_error="out")
    add(op, {"self": T((2, 3), f32), "dim": -3, "half_to_float": False}, expect_error="dim")

# ---------------------------------------------------------------------------
# max.dim_max / min.dim_min: (values, indices)

for op in ["aten::max.dim_max", "aten::min.dim_min"]:
    for dt in ALL_DTYPES:
        add(op, {"self": T((3, 5), dt, low=-2, high=2) if not dt.is_floating_point
                 else T((3, 5), dt), "dim": 1})
    for shape, dim, keepdim in [((2, 3, 4), 0, False), ((2, 3, 4), -1, True), ((2, 3, 4), 1, True),
                                ((), 0, False), ((), -1, True), ((0, 3), 1, False)]:
        add(op, {"self": T(shape, f32), "dim": dim, "keepdim": keepdim})
    add(op, {"self": T((2, 3, 4, 5), f32, dim_order=(0, 2, 3, 1)), "dim": 1})
    add(op, {"self": T((2, 5), f32, values=[[1, NAN, 3, NAN, 0], [2, 2, -1, -1, 2]]), "dim": 1},
        name="first NaN and first tie win")
    add(op, {"self": T((2, 4), f32), "dim": 1}, out_shapes=[(1,), (1,)], name="outs resized")
    add(op, {"self": T((0, 3), f32), "dim": 0}, out_dtype=[f32, torch.int64],
        out_shapes=[(3,), (3,)], expect_error="dim", name="empty dim")
    values_out, indices_out = ("max", "max_values") if "max" in op else ("min", "min_indices")
    add(op, {"self": T((2, 3), f32), "dim": 1}, out_dtype=[f32, torch.int32],
        expect_error=f"'{indices_out}'")
    add(op, {"self": T((2, 3), f32), "dim": 1}, out_dtype=[torch.float64, torch.int64],
        expect_error=f"'{values_out}'")
