"""Conformance cases of the elementwise kernels: arithmetic (sub, div, pow,
remainder, fmod, floor_divide, maximum, minimum, atan2), comparisons,
logical and bitwise ops, selection (where, masked_fill, clamp, hardtanh),
unary math, rounding, activations, tril/triu.

Every op is checked against torch over the dtypes ATen's CPU kernels take
(found by trying torch 2.6; the dtypes they reject are error cases here),
with 0-d and empty tensors, broadcasting, a permuted (non-contiguous) input,
mixed input dtypes (type promotion), Scalar overloads with int, float and
bool Scalars, out tensors of other dtypes where ATen accepts them, and error
cases whose message must name the argument at fault. Special values (NaN,
inf, -0.0, integer extremes) get their own cases.

Integer division cases never divide by zero: ATen raises ZeroDivisionError
there (the kernel returns an error, checked by expect_error cases and by
op_div_test.cpp), and int64 MIN // -1 crashes torch, so op_div_test.cpp
covers it instead.
"""

import math

import torch

from conformance.spec import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, REAL_DTYPES_NO_BOOL, Case,
                              T)

CASES = []
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
U8, I8, I16, I32, I64 = torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64
BOOL = torch.bool
SIGNED_INTS = [I8, I16, I32, I64]
NAN, INF = math.nan, math.inf
PERM3 = (2, 0, 1)  # A 3-D dim order that makes the tensor non-contiguous.


def dn(dtype):
    return str(dtype).replace("torch.", "")


def add(op, args, **kw):
    CASES.append(Case(op, args, **kw))


def domain(dtype, low, high):
    """T kwargs for values in [low, high), clipped to what the dtype holds."""
    if dtype == BOOL:
        return {}
    if dtype == U8:
        low = max(low, 0)
        high = max(high, low + 1)
    return {"low": low, "high": high}


# ---------------------------------------------------------------- unary ops

def unary_cases(op, dtypes, low=-3, high=3, extra=None, rejected=(), reject_message=None,
                **kw):
    """One case per dtype, plus 0-d, empty, permuted and resize cases on the
    first float (or first) dtype, and an error case per rejected dtype."""
    extra = extra or {}
    for dt in dtypes:
        add(op, {"self": T((3, 4), dt, **domain(dt, low, high)), **extra}, **kw)
    dt = next((d for d in dtypes if d.is_floating_point), dtypes[0])
    r = domain(dt, low, high)
    add(op, {"self": T((), dt, **r), **extra}, name=f"{dn(dt)}-0d", **kw)
    add(op, {"self": T((0, 3), dt, **r), **extra}, name=f"{dn(dt)}-empty", **kw)
    add(op, {"self": T((2, 3, 4), dt, dim_order=PERM3, **r), **extra},
        name=f"{dn(dt)}-permuted", **kw)
    add(op, {"self": T((2, 5), dt, **r), **extra}, name=f"{dn(dt)}-resize-out",
        out_shapes=(5, 2), **kw)
    for bad in rejected:
        add(op, {"self": T((2, 3), bad), **extra}, name=f"{dn(bad)}-rejected",
            expect_error=reject_message or f"'self' has dtype {dn(bad)}")


# Float math: integer and bool inputs compute in float32. (low, high) keeps
# values inside the domain; a special-values case checks the edges.
FLOAT_UNARY = {
    "sqrt": (0, 9), "rsqrt": (0.1, 9), "reciprocal": (0.2, 5), "exp": (-3, 3),
    "expm1": (-3, 3), "log": (0.1, 9), "log1p": (-0.9, 9), "log2": (0.1, 9),
    "log10": (0.1, 9), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.4, 1.4),
    "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atan": (-3, 3), "sinh": (-3, 3),
    "cosh": (-3, 3), "tanh": (-3, 3), "asinh": (-3, 3), "acosh": (1, 9),
    "atanh": (-0.99, 0.99), "erf": (-3, 3), "sigmoid": (-6, 6),
}
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 30.0]

for name, (low, high) in FLOAT_UNARY.items():
    op = f"aten::{name}.out"
    unary_cases(op, ALL_DTYPES, low, high)
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((10,), dt, values=SPECIAL)}, name=f"{dn(dt)}-special")
    # Computed in float32, then widened: float32's tolerance (ATen's vectorised
    # float32 math may differ from ours in the last bit).
    add(op, {"self": T((2, 3), I32, **domain(I32, low, high))}, name="int32-into-float64",
        out_dtype=F64, rtol=1e-5, atol=1e-5)
    add(op, {"self": T((2, 3), F32, **domain(F32, low, high))}, name="float32-into-float16",
        out_dtype=F16)
    add(op, {"self": T((2, 3), I32)}, name="int-out-rejected", out_dtype=I32,
        expect_error="'out'")

# Keep the dtype; reject bool.
for name in ["neg", "abs"]:
    op = f"aten::{name}.out"
    unary_cases(op, REAL_DTYPES_NO_BOOL, rejected=[BOOL])
    add(op, {"self": T((6,), F32, values=[NAN, INF, -INF, -0.0, -1.5, 2.0])}, name="special")
    add(op, {"self": T((4,), I8, values=[-128, 127, 0, -5])}, name="int8-extremes")
    add(op, {"self": T((3,), I64, values=[-2**63, 2**63 - 1, -7])}, name="int64-extremes")
    add(op, {"self": T((2, 3), I32)}, name="wider-out-rejected", out_dtype=I64,
        expect_error="'out' has dtype int64")

for name in ["floor", "ceil", "round", "trunc"]:
    op = f"aten::{name}.out"
    unary_cases(op, REAL_DTYPES_NO_BOOL, low=-5, high=5, rejected=[BOOL])
    add(op, {"self": T((10,), F32, values=[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, NAN, INF, -INF,
                                           -0.0])}, name="halves-and-special")
    add(op, {"self": T((3,), F64, values=[4503599627370495.5, -1e300, 1e-300])},
        name="float64-large")

ROUND_DECIMALS = "aten::round.decimals_out"
for dt in FLOAT_DTYPES:
    for decimals in [0, 1, 2, -1]:
        add(ROUND_DECIMALS, {"self": T((3, 4), dt, low=-50, high=50), "decimals": decimals},
            name=f"{dn(dt)}-decimals{decimals}")
add(ROUND_DECIMALS, {"self": T((), F32, low=-50, high=50), "decimals": 1}, name="0d")
add(ROUND_DECIMALS, {"self": T((0, 2), F32), "decimals": 1}, name="empty")
add(ROUND_DECIMALS, {"self": T((2, 3, 4), F32, dim_order=PERM3), "decimals": 2},
    name="permuted")
add(ROUND_DECIMALS, {"self": T((4,), F32, values=[2.675, 1.005, 15.0, 25.0]), "decimals": -1},
    name="ties")
add(ROUND_DECIMALS, {"self": T((4,), F32, values=[2.675, 1.005, NAN, -INF]), "decimals": 2},
    name="binary-fractions")
for bad in INT_DTYPES + [BOOL]:
    add(ROUND_DECIMALS, {"self": T((2,), bad), "decimals": 1}, name=f"{dn(bad)}-rejected",
        expect_error=f"'self' has dtype {dn(bad)}")

SIGN = "aten::sign.out"
unary_cases(SIGN, ALL_DTYPES)
add(SIGN, {"self": T((6,), F32, values=[NAN, -0.0, 0.0, -INF, INF, -3.0])}, name="special")

for name in ["isnan", "isinf"]:
    op = f"aten::{name}.out"
    unary_cases(op, ALL_DTYPES)
    for dt in FLOAT_DTYPES:
        add(op, {"self": T((6,), dt, values=[NAN, INF, -INF, 0.0, 1.0, -NAN])},
            name=f"{dn(dt)}-special")
    add(op, {"self": T((2,), F32)}, name="float-out-rejected", out_dtype=F32,
        expect_error="'out' has dtype float32, expected bool")

BITWISE_NOT = "aten::bitwise_not.out"
unary_cases(BITWISE_NOT, INT_DTYPES + [BOOL], rejected=FLOAT_DTYPES)
add(BITWISE_NOT, {"self": T((4,), I64, values=[0, -1, 2**63 - 1, -2**63])}, name="int64-extremes")

LOGICAL_NOT = "aten::logical_not.out"
unary_cases(LOGICAL_NOT, ALL_DTYPES)
add(LOGICAL_NOT, {"self": T((5,), F32, values=[NAN, 0.0, -0.0, INF, 1e-30])}, name="special")
for out_dt in [F32, I8, U8, F16]:
    add(LOGICAL_NOT, {"self": T((2, 3), I32)}, name=f"into-{dn(out_dt)}", out_dtype=out_dt)

# ---------------------------------------------------------------- activations

RELU = "aten::relu.out"
unary_cases(RELU, REAL_DTYPES_NO_BOOL, rejected=[BOOL])
add(RELU, {"self": T((4,), F32, values=[NAN, -INF, INF, -0.0])}, name="special")

for name in ["silu", "hardswish", "hardsigmoid"]:
    op = f"aten::{name}.out"
    unary_cases(op, FLOAT_DTYPES, low=-5, high=5, rejected=INT_DTYPES + [BOOL])
    add(op, {"self": T((7,), F32, values=[NAN, -INF, INF, -3.0, 3.0, 0.0, -50.0])},
        name="special")

GELU = "aten::gelu.out"
for approximate in ["none", "tanh"]:
    unary_cases(GELU, FLOAT_DTYPES, extra={"approximate": approximate},
                rejected=[I32, BOOL])
    # Not +inf with "none": ATen's float32 result there depends on the tensor
    # size (inf from its scalar loop, NaN from its vectorised erf); the kernel
    # gives inf, the limit (op_activation_test.cpp).
    special = [NAN, -INF, -10.0, 10.0, 1e30] + ([INF] if approximate == "tanh" else [])
    add(GELU, {"self": T((len(special),), F32, values=special), "approximate": approximate},
        name=f"special-{approximate}")
add(GELU, {"self": T((2,), F32), "approximate": "sigmoid"}, name="bad-approximate",
    expect_error="'approximate'")

LEAKY_RELU = "aten::leaky_relu.out"
unary_cases(LEAKY_RELU, FLOAT_DTYPES, rejected=[I64, BOOL])
for slope in [0.2, 2, -0.5, 0.0]:
    add(LEAKY_RELU, {"self": T((3, 4), F32), "negative_slope": slope}, name=f"slope{slope}")
add(LEAKY_RELU, {"self": T((3, 4), F16), "negative_slope": 0.1}, name="float16-slope0.1")

ELU = "aten::elu.out"
unary_cases(ELU, FLOAT_DTYPES, rejected=[I32, BOOL])
for params in [(1.5, 2.0, 0.5), (0.5, 1, 2), (1, 1.0507, 1)]:
    alpha, scale, input_scale = params
    for dt in [F32, F64, BF16]:
        add(ELU, {"self": T((3, 4), dt), "alpha": alpha, "scale": scale,
                  "input_scale": input_scale}, name=f"{dn(dt)}-params{params}")
add(ELU, {"self": T((4,), F32, values=[NAN, -INF, INF, -0.0])}, name="special")

SOFTPLUS = "aten::softplus.out"
unary_cases(SOFTPLUS, FLOAT_DTYPES, low=-10, high=30, rejected=[I32, BOOL])
for beta, threshold in [(2, 20), (0.5, 5), (1, 1)]:
    for dt in [F32, F64]:
        add(SOFTPLUS, {"self": T((3, 4), dt, low=-10, high=30), "beta": beta,
                       "threshold": threshold}, name=f"{dn(dt)}-beta{beta}-threshold{threshold}")

# ---------------------------------------------------------------- binary ops


def nonzero_divisor(shape, dt, dim_order=None):
    """A divisor T with no zero: both signs for signed integers (magnitudes
    1..9 in a fixed pattern), 1..11 for uint8, random values for floats."""
    n = math.prod(shape)
    if dt == U8:
        return T(shape, dt, low=1, high=12, dim_order=dim_order)
    if dt in SIGNED_INTS and n > 0:
        flat = [((i * 7) % 9 + 1) * (-1 if i % 3 == 1 else 1) for i in range(n)]
        return T(shape, dt, values=reshape(flat, shape), dim_order=dim_order)
    return T(shape, dt, dim_order=dim_order)


def reshape(flat, shape):
    """A nested list of `shape` from a flat list."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    if len(shape) == 1:
        return flat[:shape[0]]
    return [reshape(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def binary_cases(op, dtypes, other_name="other", divisor=False, rejected=(),
                 reject_message=None, extra=None, mixed=True, **kw):
    """Tensor-Tensor cases: every dtype; broadcasting; 0-d; empty; permuted;
    mixed dtypes; a shape error; rejected dtypes."""
    extra = extra or {}

    def other(shape, dt, dim_order=None):
        return (nonzero_divisor(shape, dt, dim_order) if divisor
                else T(shape, dt, dim_order=dim_order))

    def args(a, b):
        return {"self": a, other_name: b, **extra}

    for dt in dtypes:
        add(op, args(T((3, 4), dt), other((3, 4), dt)), **kw)
        add(op, args(T((2, 1, 4), dt), other((3, 1), dt)), name=f"{dn(dt)}-broadcast", **kw)
    first_int = next((d for d in dtypes if not d.is_floating_point and d != BOOL), None)
    for dt in [d for d in [F32, first_int] if d in dtypes]:
        add(op, args(T((), dt), other((2, 3), dt)), name=f"{dn(dt)}-0d-self", **kw)
        add(op, args(T((2, 3), dt), other((), dt)), name=f"{dn(dt)}-0d-other", **kw)
        add(op, args(T((), dt), other((), dt)), name=f"{dn(dt)}-0d-both", **kw)
        add(op, args(T((0, 3), dt), other((3,), dt)), name=f"{dn(dt)}-empty", **kw)
        add(op, args(T((2, 3, 4), dt, dim_order=PERM3), other((4,), dt)),
            name=f"{dn(dt)}-permuted-self", **kw)
        add(op, args(T((3, 4), dt), other((3, 4), dt, dim_order=(1, 0))),
            name=f"{dn(dt)}-permuted-other", **kw)
        add(op, args(T((2, 3), dt), other((2, 3), dt)), name=f"{dn(dt)}-resize-out",
            out_shapes=(3, 2), **kw)
    if mixed:
        pairs = [(I32, F32), (U8, I8), (BOOL, I16), (F16, F32), (I8, F64), (BF16, F16),
                 (I64, F16)]
        for a, b in pairs:
            if a in dtypes and b in dtypes:
                add(op, args(T((2, 3), a), other((2, 3), b)), name=f"{dn(a)}-{dn(b)}", **kw)
        # A 0-d tensor of a higher category decides; of the same category it does not.
        if F64 in dtypes and I8 in dtypes:
            add(op, args(T((2, 3), I8), other((), F64)), name="int8-0d-float64", **kw)
        if F64 in dtypes:
            add(op, args(T((2, 3), F32), other((), F64)), name="float32-0d-float64", **kw)
    add(op, args(T((2, 3), F32 if F32 in dtypes else dtypes[0]),
                 other((4,), F32 if F32 in dtypes else dtypes[0])),
        name="shape-mismatch", expect_error=f"'{other_name}'")
    for bad in rejected:
        add(op, args(T((2, 3), bad), T((2, 3), bad)), name=f"{dn(bad)}-rejected",
            expect_error=reject_message or f"'self' has dtype {dn(bad)}")


def scalar_cases(op, dtypes, scalars, other_name="other", extra=None, **kw):
    """Tensor-Scalar cases: every dtype with every Scalar, plus 0-d, empty
    and permuted tensors."""
    extra = extra or {}
    for dt in dtypes:
        for s in scalars:
            add(op, {"self": T((3, 4), dt), other_name: s, **extra},
                name=f"{dn(dt)}-{s!r}", **kw)
    dt = F32 if F32 in dtypes else dtypes[0]
    s = scalars[0]
    add(op, {"self": T((), dt), other_name: s, **extra}, name=f"{dn(dt)}-0d", **kw)
    add(op, {"self": T((0, 3), dt), other_name: s, **extra}, name=f"{dn(dt)}-empty", **kw)
    add(op, {"self": T((2, 3, 4), dt, dim_order=PERM3), other_name: s, **extra},
        name=f"{dn(dt)}-permuted", **kw)


# sub: no bool anywhere.
SUB, SUB_S = "aten::sub.out", "aten::sub.Scalar_out"
binary_cases(SUB, REAL_DTYPES_NO_BOOL, rejected=[BOOL],
             reject_message="'self' is bool")
for dt in REAL_DTYPES_NO_BOOL:
    add(SUB, {"self": T((3, 4), dt), "other": T((4,), dt), "alpha": 3}, name=f"{dn(dt)}-alpha3")
for dt in FLOAT_DTYPES:
    add(SUB, {"self": T((3, 4), dt), "other": T((3, 4), dt), "alpha": 0.5},
        name=f"{dn(dt)}-alpha0.5")
add(SUB, {"self": T((4,), I8, values=[-128, 127, 0, 5]), "other": T((4,), I8,
          values=[1, -1, -128, 3])}, name="int8-wraps")
add(SUB, {"self": T((2,), I64, values=[-2**63, 2**63 - 1]), "other": T((2,), I64,
          values=[1, -1])}, name="int64-wraps")
add(SUB, {"self": T((2, 3), I32), "other": T((2, 3), F32)}, name="into-float64", out_dtype=F64)
add(SUB, {"self": T((2, 3), I32), "other": T((2, 3), BOOL)}, name="bool-other-rejected",
    expect_error="'other' is bool")
add(SUB, {"self": T((2, 3), I32), "other": T((2, 3), I32), "alpha": 1.5},
    name="float-alpha-rejected", expect_error="'alpha'")
add(SUB, {"self": T((2, 3), F32), "other": T((2, 3), F32)}, name="int-out-rejected",
    out_dtype=I32, expect_error="'out'")
scalar_cases(SUB_S, REAL_DTYPES_NO_BOOL, [2, -1.5])
add(SUB_S, {"self": T((3, 4), I8), "other": 300}, name="int8-300-wraps")
add(SUB_S, {"self": T((3, 4), F16), "other": 0.1, "alpha": 3}, name="float16-alpha3")
add(SUB_S, {"self": T((2,), F32), "other": True}, name="bool-other-rejected",
    expect_error="'other'")
add(SUB_S, {"self": T((2,), BOOL), "other": 1}, name="bool-self-rejected",
    expect_error="'self' is bool")

# div: true division promotes integers to float32.
DIV, DIV_MODE = "aten::div.out", "aten::div.out_mode"
DIV_S, DIV_S_MODE = "aten::div.Scalar_out", "aten::div.Scalar_mode_out"
binary_cases(DIV, ALL_DTYPES, divisor=True)
add(DIV, {"self": T((4,), F32, values=[1.0, -1.0, 0.0, NAN]),
          "other": T((4,), F32, values=[0.0, 0.0, 0.0, 1.0])}, name="float-by-zero")
add(DIV, {"self": T((3,), I32, values=[1, 0, -7]), "other": T((3,), I32, values=[0, 0, 2])},
    name="int-by-zero-is-ieee")
add(DIV, {"self": T((2, 3), I32), "other": nonzero_divisor((2, 3), I32)},
    name="int-into-int-rejected", out_dtype=I32, expect_error="'out'")
for mode in [None, "trunc", "floor"]:
    dtypes = ALL_DTYPES if mode is None else REAL_DTYPES_NO_BOOL
    rejected = [] if mode is None else [BOOL]
    binary_cases(DIV_MODE, dtypes, divisor=True, extra={"rounding_mode": mode},
                 rejected=rejected)
    add(DIV_MODE, {"self": T((7,), F32, values=[-7.0, 7.0, 5.0, -0.0, 0.0, 1.0, -1.0]),
                   "other": T((7,), F32, values=[3.0, -3.0, 0.0, 2.0, -2.0, INF, INF]),
                   "rounding_mode": mode}, name=f"float-special-{mode}")
    add(DIV_MODE, {"self": T((3, 4), F32, low=-100, high=100),
                   "other": T((3, 4), F32, low=0.1, high=2), "rounding_mode": mode},
        name=f"float-wide-{mode}")
    scalar_cases(DIV_S_MODE, dtypes, [3, -2.5], extra={"rounding_mode": mode})
    add(DIV_S_MODE, {"self": T((3, 4), F16, low=-50, high=50), "other": 0.3,
                     "rounding_mode": mode}, name=f"float16-0.3-{mode}")
    add(DIV_S_MODE, {"self": T((3, 4), BF16, low=-50, high=50), "other": 0.3,
                     "rounding_mode": mode}, name=f"bfloat16-0.3-{mode}")
for mode in ["trunc", "floor"]:
    for dt in SIGNED_INTS:
        add(DIV_MODE, {"self": T((4,), dt, values=[-7, 7, 7, -7]),
                       "other": T((4,), dt, values=[2, -2, 2, -2]), "rounding_mode": mode},
            name=f"{dn(dt)}-signs-{mode}")
    add(DIV_MODE, {"self": T((2,), I8, values=[-128, 5]), "other": T((2,), I8, values=[-1, -1]),
                   "rounding_mode": mode}, name=f"int8-min-by-minus-one-{mode}")
    add(DIV_MODE, {"self": T((2, 3), I32), "other": T((2, 3), I32, values=[[1, 2, 3], [4, 0, 6]]),
                   "rounding_mode": mode}, name=f"int-zero-divisor-{mode}",
        expect_error="division by zero")
    add(DIV_S_MODE, {"self": T((2, 3), I64), "other": 0, "rounding_mode": mode},
        name=f"int-zero-scalar-{mode}", expect_error="division by zero")
    add(DIV_MODE, {"self": T((2, 3), I32), "other": nonzero_divisor((2, 3), I32),
                   "rounding_mode": mode}, name=f"int-into-float-{mode}", out_dtype=F32)
add(DIV_MODE, {"self": T((2, 3), F32), "other": T((2, 3), F32), "rounding_mode": "round"},
    name="bad-rounding-mode", expect_error="'rounding_mode'")
scalar_cases(DIV_S, ALL_DTYPES, [3, -2.5, True])
add(DIV_S, {"self": T((3, 4), F16), "other": 0.3}, name="float16-0.3")
add(DIV_S, {"self": T((3, 4), I32), "other": 0}, name="int-by-zero")
add(DIV_S, {"self": T((2, 3), I32), "other": 2}, name="float64-out-rejected", out_dtype=F64,
    expect_error="'out' has dtype float64")

FLOOR_DIVIDE, FLOOR_DIVIDE_S = "aten::floor_divide.out", "aten::floor_divide.Scalar_out"
binary_cases(FLOOR_DIVIDE, REAL_DTYPES_NO_BOOL, divisor=True, rejected=[BOOL])
add(FLOOR_DIVIDE, {"self": T((2, 3), I16), "other": T((3,), I16, values=[1, 0, 2])},
    name="int-zero-divisor", expect_error="division by zero")
scalar_cases(FLOOR_DIVIDE_S, REAL_DTYPES_NO_BOOL, [3, -2.5])

# remainder / fmod: sign rules; integer zero divisors are errors.
for name, fn_s in [("remainder", "Scalar_out"), ("fmod", "Scalar_out")]:
    op, op_s = f"aten::{name}.Tensor_out", f"aten::{name}.{fn_s}"
    binary_cases(op, REAL_DTYPES_NO_BOOL, divisor=True, rejected=[BOOL])
    for dt in SIGNED_INTS + [F32, F64, F16]:
        add(op, {"self": T((4,), dt, values=[-7, 7, -7, 7]),
                 "other": T((4,), dt, values=[3, -3, -3, 3])}, name=f"{dn(dt)}-signs")
    add(op, {"self": T((8,), F32, values=[5.0, -0.0, 1.0, -1.0, INF, NAN, 2.5, -2.5]),
             "other": T((8,), F32, values=[0.0, 2.0, -INF, INF, 2.0, 1.0, 0.5, 0.75])},
        name="float-special")
    add(op, {"self": T((3, 4), F32, low=-100, high=100), "other": T((3, 4), F32, low=0.1,
                                                                       high=3)},
        name="float-wide")
    add(op, {"self": T((2,), I64, values=[-2**63, 2**63 - 1]), "other": T((2,), I64,
                                                                          values=[7, -7])},
        name="int64-extremes")
    add(op, {"self": T((2, 3), U8), "other": T((3,), U8, values=[4, 0, 1])},
        name="int-zero-divisor", expect_error="division by zero")
    scalar_cases(op_s, REAL_DTYPES_NO_BOOL, [3, -2.5])
    add(op_s, {"self": T((3, 4), F16, low=-10, high=10), "other": 0.3}, name="float16-0.3")
    add(op_s, {"self": T((3, 4), I32), "other": 0.0}, name="int-by-float-zero")
    add(op_s, {"self": T((3, 4), I32), "other": 0}, name="int-by-zero",
        expect_error="division by zero")
    add(op_s, {"self": T((3, 4), I32), "other": 3}, name="into-int64", out_dtype=I64)

# maximum / minimum: NaN propagates; bool is or / and.
for name in ["maximum", "minimum"]:
    op = f"aten::{name}.out"
    binary_cases(op, ALL_DTYPES)
    add(op, {"self": T((5,), F32, values=[NAN, 1.0, 2.0, -0.0, INF]),
             "other": T((5,), F32, values=[0.0, NAN, 1.0, 0.0, NAN])}, name="nan")
    add(op, {"self": T((3,), F16, values=[NAN, 1.0, -INF]),
             "other": T((3,), F16, values=[0.0, NAN, 1.0])}, name="float16-nan")
    add(op, {"self": T((2, 3), I32), "other": T((2, 3), I32)}, name="into-float32",
        out_dtype=F32)
    add(op, {"self": T((3,), I64, values=[-2**63, 2**63 - 1, 5]),
             "other": T((3,), I64, values=[2**63 - 1, -2**63, 5])}, name="int64-extremes")
    add(op, {"self": T((2, 3), F32), "other": T((2, 3), F32)}, name="bool-out-rejected",
        out_dtype=BOOL, expect_error="'out'")

ATAN2 = "aten::atan2.out"
binary_cases(ATAN2, ALL_DTYPES)
add(ATAN2, {"self": T((8,), F32, values=[0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, NAN]),
            "other": T((8,), F32, values=[0.0, 0.0, -0.0, -0.0, 0.0, -INF, INF, 1.0])},
    name="special")
add(ATAN2, {"self": T((2, 3), I32), "other": T((2, 3), I32)}, name="int-out-rejected",
    out_dtype=I32, expect_error="'out'")

# pow: integer powers wrap; negative integer exponents follow ATen's powi.
POW_TT, POW_TS, POW_S = ("aten::pow.Tensor_Tensor_out", "aten::pow.Tensor_Scalar_out",
                         "aten::pow.Scalar_out")
for dt in REAL_DTYPES_NO_BOOL:
    if dt.is_floating_point:
        base, exponent = T((3, 4), dt, low=0.1, high=3), T((3, 4), dt, low=-3, high=3)
    else:
        base, exponent = T((3, 4), dt, **domain(dt, -4, 5)), T((3, 4), dt, **domain(dt, -3, 8))
    add(POW_TT, {"self": base, "exponent": exponent})
    add(POW_TT, {"self": T((2, 1, 4), dt, **domain(dt, 0, 3)),
                 "exponent": T((3, 1), dt, **domain(dt, 0, 4))}, name=f"{dn(dt)}-broadcast")
add(POW_TT, {"self": T((3, 4), F32), "exponent": T((3, 4), F32)}, name="negative-bases-nan")
add(POW_TT, {"self": T((), F32, low=0.5, high=2), "exponent": T((2, 3), F32)}, name="0d-self")
add(POW_TT, {"self": T((2, 3), I32, low=-3, high=4), "exponent": T((), I32, low=0, high=5)},
    name="0d-exponent")
add(POW_TT, {"self": T((0, 3), F32), "exponent": T((3,), F32)}, name="empty")
add(POW_TT, {"self": T((2, 3, 4), F32, low=0.1, high=3, dim_order=PERM3),
             "exponent": T((4,), F32)}, name="permuted")
add(POW_TT, {"self": T((5,), I32, values=[-1, -1, 1, 2, 0]),
             "exponent": T((5,), I32, values=[-3, -2, -5, -1, -1])},
    name="negative-int-exponents")
add(POW_TT, {"self": T((2, 3), I8, low=-4, high=5), "exponent": T((2, 3), U8, low=0, high=6)},
    name="int8-uint8")
add(POW_TT, {"self": T((2, 3), I32, low=1, high=4), "exponent": T((2, 3), F32)},
    name="int32-float32")
add(POW_TT, {"self": T((2, 3), BOOL), "exponent": T((2, 3), I32, low=0, high=4)},
    name="bool-int32")
add(POW_TT, {"self": T((2, 3), F32), "exponent": T((4,), F32)}, name="shape-mismatch",
    expect_error="'exponent'")
add(POW_TT, {"self": T((2, 3), BOOL), "exponent": T((2, 3), BOOL)}, name="bool-rejected",
    expect_error="bool")
for dt in ALL_DTYPES:
    exps = [0, 1, 2, 3, -2.0, 0.5, -0.5, 2.3, True, False]
    if dt.is_floating_point:
        exps.append(-1)
    for e in exps:
        if dt == BOOL and e in (0.5, -0.5, 2.3, -2.0):
            continue
        low, high = (0.1, 3) if isinstance(e, float) and dt.is_floating_point else (-3, 4)
        add(POW_TS, {"self": T((3, 4), dt, **domain(dt, low, high)), "exponent": e},
            name=f"{dn(dt)}-{e!r}")
add(POW_TS, {"self": T((6,), F32, values=[-INF, -0.0, 0.0, INF, NAN, -4.0]), "exponent": 0.5},
    name="float32-special-0.5")
add(POW_TS, {"self": T((6,), BF16, values=[-INF, -0.0, 0.0, INF, NAN, -4.0]), "exponent": 0.5},
    name="bfloat16-special-0.5")
add(POW_TS, {"self": T((6,), F16, values=[-INF, -0.0, 0.0, INF, NAN, -4.0]), "exponent": 0.5},
    name="float16-special-0.5")
add(POW_TS, {"self": T((7,), F32, values=[-INF, NAN, -0.0, 1e20, -1e-30, 3e-20, -7.25]),
             "exponent": 2.0}, name="float32-special-2")
add(POW_TS, {"self": T((4,), F32, values=[-0.0, 0.0, -INF, 2.0]), "exponent": -0.5},
    name="float32-special-minus-0.5")
add(POW_TS, {"self": T((3,), I8, values=[1, 2, 3]), "exponent": 7}, name="int8-wraps")
add(POW_TS, {"self": T((2,), I64, values=[3, -3]), "exponent": 41}, name="int64-wraps")
add(POW_TS, {"self": T((), F32), "exponent": 2}, name="float32-0d")
add(POW_TS, {"self": T((0, 2), I32), "exponent": 2}, name="int32-empty")
add(POW_TS, {"self": T((2, 3, 4), F32, dim_order=PERM3), "exponent": 3}, name="permuted")
add(POW_TS, {"self": T((2, 3), I32), "exponent": 2}, name="into-float32", out_dtype=F32)
add(POW_TS, {"self": T((2, 3), I32), "exponent": -1}, name="negative-int-exponent",
    expect_error="'exponent'")
add(POW_TS, {"self": T((2, 3), BOOL), "exponent": -2}, name="bool-negative-int-exponent",
    expect_error="'exponent'")
add(POW_TS, {"self": T((2, 3), I8), "exponent": 300}, name="int8-exponent-overflow",
    expect_error="'exponent'")
for dt in REAL_DTYPES_NO_BOOL:
    for b in [2, -1.5, 1, 0, -3]:
        if dt.is_floating_point:
            e = T((3, 4), dt, low=-3, high=3)
        else:
            e = T((3, 4), dt, **domain(dt, -3, 8))
        add(POW_S, {"self": b, "exponent": e}, name=f"{b!r}-{dn(dt)}")
add(POW_S, {"self": 1.0, "exponent": T((2, 3), I8)}, name="1.0-int8")
add(POW_S, {"self": 300, "exponent": T((2,), I8, values=[1, 2])}, name="300-int8-wraps")
add(POW_S, {"self": 2.1, "exponent": T((2,), F16, values=[1.0, 2.0])}, name="2.1-float16")
add(POW_S, {"self": 2, "exponent": T((2, 3), BOOL)}, name="2-bool")
add(POW_S, {"self": 2, "exponent": T((), F32)}, name="2-0d")
add(POW_S, {"self": 2, "exponent": T((0, 3), F32)}, name="2-empty")
add(POW_S, {"self": 2, "exponent": T((2, 3, 4), F32, dim_order=PERM3)}, name="2-permuted")
add(POW_S, {"self": True, "exponent": T((2, 3), BOOL)}, name="bool-base-bool-rejected",
    expect_error="bool")

# ---------------------------------------------------------------- comparisons, logical, bitwise

for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    op, op_s = f"aten::{name}.Tensor_out", f"aten::{name}.Scalar_out"
    binary_cases(op, ALL_DTYPES)
    for dt in [I32, F16]:
        add(op, {"self": T((2, 3), dt, low=-2, high=2), "other": T((2, 3), dt, low=-2, high=2)},
            name=f"{dn(dt)}-many-equal")
    add(op, {"self": T((5,), F32, values=[NAN, 1.0, INF, -0.0, -INF]),
             "other": T((5,), F32, values=[NAN, NAN, INF, 0.0, 1.0])}, name="special")
    for out_dt in [F32, I64, U8]:
        add(op, {"self": T((2, 3), I32), "other": T((2, 3), F32)}, name=f"into-{dn(out_dt)}",
            out_dtype=out_dt)
    scalar_cases(op_s, ALL_DTYPES, [1, -0.5, True])
    add(op_s, {"self": T((2,), I8, values=[44, 45]), "other": 300}, name="int8-300-wraps")
    add(op_s, {"self": T((2,), U8, values=[0, 255]), "other": -1}, name="uint8-minus-one")
    add(op_s, {"self": T((2,), F16, values=[0.1, 0.2]), "other": 0.1}, name="float16-0.1")
    add(op_s, {"self": T((2,), F32, values=[0.1, NAN]), "other": 0.1}, name="float32-0.1")
    add(op_s, {"self": T((2,), BOOL, values=[False, True]), "other": 2}, name="bool-2")
    add(op_s, {"self": T((3, 4), I32), "other": 2}, name="into-float64", out_dtype=F64)

for name in ["and", "or", "xor"]:
    op = f"aten::logical_{name}.out"
    binary_cases(op, ALL_DTYPES)
    add(op, {"self": T((5,), F32, values=[NAN, 0.0, -0.0, 0.5, 0.0]),
             "other": T((5,), I8, values=[0, 3, 1, 0, 0])}, name="float-int8")
    for out_dt in [F32, I32, F16]:
        add(op, {"self": T((2, 3), I32), "other": T((2, 3), BOOL)}, name=f"into-{dn(out_dt)}",
            out_dtype=out_dt)

for name in ["and", "or", "xor"]:
    op, op_s = f"aten::bitwise_{name}.Tensor_out", f"aten::bitwise_{name}.Scalar_out"
    binary_cases(op, INT_DTYPES + [BOOL], rejected=FLOAT_DTYPES)
    add(op, {"self": T((2, 3), I32), "other": T((2, 3), F32)}, name="int-float-rejected",
        expect_error="'other'")
    add(op, {"self": T((3,), I64, values=[-2**63, -1, 2**62]),
             "other": T((3,), I64, values=[-1, 2**63 - 1, 2**62])}, name="int64-extremes")
    add(op, {"self": T((2, 3), I16), "other": T((2, 3), I16)}, name="into-int64",
        out_dtype=I64)
    scalar_cases(op_s, INT_DTYPES + [BOOL], [3, True, -1])
    add(op_s, {"self": T((2,), I8, values=[1, 2]), "other": 300}, name="int8-300-wraps")
    add(op_s, {"self": T((2, 3), I32), "other": 1.0}, name="float-scalar-rejected",
        expect_error="'other'")

# ---------------------------------------------------------------- selection

WHERE = "aten::where.self_out"
for dt in ALL_DTYPES:
    add(WHERE, {"condition": T((3, 4), BOOL), "self": T((3, 4), dt), "other": T((3, 4), dt)})
add(WHERE, {"condition": T((2, 1, 4), BOOL), "self": T((3, 1), F32), "other": T((4,), F32)},
    name="broadcast-all")
add(WHERE, {"condition": T((), BOOL), "self": T((2, 3), I32), "other": T((), I32)},
    name="0d-condition-other")
add(WHERE, {"condition": T((0, 3), BOOL), "self": T((3,), F32), "other": T((1,), F32)},
    name="empty")
add(WHERE, {"condition": T((2, 3, 4), BOOL, dim_order=PERM3),
            "self": T((2, 3, 4), F32, dim_order=PERM3), "other": T((4,), F32)},
    name="permuted")
add(WHERE, {"condition": T((2, 3), BOOL), "self": T((2, 3), I8), "other": T((), F64)},
    name="int8-0d-float64")
add(WHERE, {"condition": T((2, 3), BOOL), "self": T((2, 3), F16), "other": T((), F64)},
    name="float16-0d-float64")
add(WHERE, {"condition": T((2, 3), BOOL), "self": T((2, 3), U8), "other": T((2, 3), I8)},
    name="uint8-int8")
add(WHERE, {"condition": T((2, 3), BOOL), "self": T((2, 3), BOOL), "other": T((2, 3), F32)},
    name="bool-float32")
add(WHERE, {"condition": T((2, 3), U8, low=0, high=3), "self": T((2, 3), F32),
            "other": T((2, 3), F32)}, name="uint8-condition")
add(WHERE, {"condition": T((2, 3), I8), "self": T((2, 3), F32), "other": T((2, 3), F32)},
    name="int8-condition-rejected", expect_error="'condition'")
add(WHERE, {"condition": T((2, 3), BOOL), "self": T((2, 3), F32), "other": T((4,), F32)},
    name="shape-mismatch", out_dtype=F32, expect_error="'other'")

MASKED_FILL = "aten::masked_fill.Scalar_out"
for dt in ALL_DTYPES:
    for value in [1, -2.5, True]:
        if not dt.is_floating_point and isinstance(value, float):
            continue
        add(MASKED_FILL, {"self": T((3, 4), dt), "mask": T((3, 4), BOOL), "value": value},
            name=f"{dn(dt)}-{value!r}")
add(MASKED_FILL, {"self": T((3, 4), I32), "mask": T((4,), BOOL), "value": 7},
    name="broadcast-mask")
add(MASKED_FILL, {"self": T((3,), F32), "mask": T((2, 3), BOOL), "value": 0.0},
    name="mask-widens-self")
add(MASKED_FILL, {"self": T((), F32), "mask": T((), BOOL), "value": 5}, name="0d")
add(MASKED_FILL, {"self": T((0, 3), F32), "mask": T((3,), BOOL), "value": 5}, name="empty")
add(MASKED_FILL, {"self": T((2, 3, 4), F32, dim_order=PERM3), "mask": T((3, 4), BOOL),
                  "value": -1}, name="permuted")
add(MASKED_FILL, {"self": T((3,), I32, values=[1, 2, 3]), "mask": T((3,), BOOL), "value": 1.7},
    name="int-float-value-truncates")
add(MASKED_FILL, {"self": T((3,), F16), "mask": T((3,), BOOL), "value": INF}, name="float16-inf")
add(MASKED_FILL, {"self": T((3,), F32), "mask": T((3,), BOOL), "value": NAN}, name="float32-nan")
add(MASKED_FILL, {"self": T((3,), BOOL), "mask": T((3,), BOOL), "value": 2}, name="bool-2")
add(MASKED_FILL, {"self": T((3,), I8), "mask": T((3,), BOOL), "value": 300},
    name="int8-overflow-rejected", expect_error="'value'")
add(MASKED_FILL, {"self": T((3,), I32), "mask": T((3,), BOOL), "value": NAN},
    name="int-nan-rejected", expect_error="'value'")
add(MASKED_FILL, {"self": T((3,), I32), "mask": T((3,), U8), "value": 1},
    name="uint8-mask-rejected", expect_error="'mask'")
add(MASKED_FILL, {"self": T((2, 3), I32), "mask": T((4,), BOOL), "value": 1},
    name="shape-mismatch", expect_error="'mask'")

CLAMP, CLAMP_T, HARDTANH = "aten::clamp.out", "aten::clamp.Tensor_out", "aten::hardtanh.out"
for dt in REAL_DTYPES_NO_BOOL:
    for lo, hi in [(-1, 2), (None, 1), (0, None), (2, -1)]:
        add(CLAMP, {"self": T((3, 4), dt), "min": lo, "max": hi}, name=f"{dn(dt)}-{lo}-{hi}")
    add(CLAMP, {"self": T((3, 4), dt), "min": -0.5, "max": 1.5}, name=f"{dn(dt)}-float-bounds")
add(CLAMP, {"self": T((3, 4), BOOL), "min": 0, "max": 1}, name="bool-int-bounds")
add(CLAMP, {"self": T((3, 4), U8), "min": -1, "max": 5}, name="uint8-minus-one")
add(CLAMP, {"self": T((5,), F32, values=[NAN, -1.0, 0.5, 3.0, -INF]), "min": 0.0, "max": 1.0},
    name="nan-self")
add(CLAMP, {"self": T((4,), F32, values=[NAN, -1.0, 0.5, 3.0]), "min": NAN, "max": 2.0},
    name="nan-bound")
add(CLAMP, {"self": T((4,), F32, values=[NAN, -1.0, 0.5, 3.0]), "min": NAN},
    name="nan-min-only")
add(CLAMP, {"self": T((4,), F32, values=[NAN, -1.0, 0.5, 3.0]), "max": NAN},
    name="nan-max-only")
add(CLAMP, {"self": T((), F32), "min": 0.0}, name="0d")
add(CLAMP, {"self": T((0, 3), F32), "min": 0.0}, name="empty")
add(CLAMP, {"self": T((2, 3, 4), I32, dim_order=PERM3), "min": -2, "max": 3}, name="permuted")
add(CLAMP, {"self": T((2, 3), F32)}, name="no-bounds-rejected", expect_error="'min' and 'max'")
add(CLAMP, {"self": T((2, 3), I8), "min": -1000, "max": 5}, name="int8-bound-overflow",
    expect_error="'min'")
add(CLAMP, {"self": T((2, 3), F16), "min": 0, "max": 1e6}, name="float16-bound-overflow",
    expect_error="'max'")
add(CLAMP, {"self": T((2, 3), BOOL), "min": False, "max": True}, name="bool-rejected",
    expect_error="bool")
add(CLAMP, {"self": T((2, 3), I32), "min": 0.5}, name="int-out-rejected", out_dtype=I32,
    expect_error="'out'")

for dt in REAL_DTYPES_NO_BOOL:
    add(CLAMP_T, {"self": T((3, 4), dt), "min": T((3, 4), dt, **domain(dt, -3, 0)),
                  "max": T((4,), dt, **domain(dt, 0, 3))}, name=f"{dn(dt)}-both")
    add(CLAMP_T, {"self": T((3, 4), dt), "min": T((3, 1), dt)}, name=f"{dn(dt)}-min-only")
    add(CLAMP_T, {"self": T((3, 4), dt), "max": T((), dt)}, name=f"{dn(dt)}-max-only")
add(CLAMP_T, {"self": T((3,), F32), "min": T((2, 1), F32)}, name="bound-widens-self")
add(CLAMP_T, {"self": T((3,), F32, values=[0.5, NAN, 5.0]), "min": T((2, 1), F32,
              values=[[1.0], [NAN]]), "max": T((), F32, values=2.0)}, name="nan")
add(CLAMP_T, {"self": T((3,), F32, values=[0.5, NAN, 5.0]), "min": T((2, 1), F32,
              values=[[1.0], [NAN]])}, name="nan-min-only")
add(CLAMP_T, {"self": T((3,), F32, values=[0.5, NAN, 5.0]), "max": T((3,), F32,
              values=[NAN, 1.0, 1.0])}, name="nan-max-only")
add(CLAMP_T, {"self": T((2, 3), I8), "min": T((), F64, low=-2, high=2)}, name="int8-0d-float64")
add(CLAMP_T, {"self": T((2, 3), I32), "min": T((2, 3), F32), "max": T((2, 3), I16)},
    name="int32-float32-int16")
add(CLAMP_T, {"self": T((), F32), "min": T((), F32), "max": T((), F32)}, name="0d")
add(CLAMP_T, {"self": T((0, 3), F32), "min": T((3,), F32)}, name="empty")
add(CLAMP_T, {"self": T((2, 3, 4), F32, dim_order=PERM3), "min": T((4,), F32),
              "max": T((3, 1), F32)}, name="permuted")
add(CLAMP_T, {"self": T((2, 3), I32), "min": T((2, 3), I32)}, name="into-float32",
    out_dtype=F32)
add(CLAMP_T, {"self": T((2, 3), F32)}, name="no-bounds-rejected", expect_error="'min' and 'max'")
add(CLAMP_T, {"self": T((2, 3), BOOL), "min": T((2, 3), BOOL), "max": T((2, 3), BOOL)},
    name="bool-both-bounds-rejected", expect_error="bool")
add(CLAMP_T, {"self": T((2, 3), BOOL), "min": T((2, 3), BOOL)}, name="bool-min-only")
add(CLAMP_T, {"self": T((2, 3), BOOL), "max": T((3,), BOOL)}, name="bool-max-only")
add(CLAMP_T, {"self": T((2, 3), BOOL), "min": T((2, 3), I8)}, name="bool-int8-min")
add(CLAMP_T, {"self": T((2, 3), F32), "min": T((4,), F32)}, name="shape-mismatch",
    expect_error="'min'")

for dt in [I8, I16, I32, I64] + FLOAT_DTYPES:
    add(HARDTANH, {"self": T((3, 4), dt)})
    add(HARDTANH, {"self": T((3, 4), dt), "min_val": -1.7, "max_val": 2.5},
        name=f"{dn(dt)}-fractional")
add(HARDTANH, {"self": T((3, 4), U8), "min_val": 2, "max_val": 6}, name="uint8-positive")
add(HARDTANH, {"self": T((4,), F32, values=[NAN, -INF, INF, 0.3])}, name="special")
add(HARDTANH, {"self": T((4,), F32, values=[NAN, -2.0, 0.5, 3.0]), "min_val": NAN},
    name="nan-bound")
add(HARDTANH, {"self": T((), F32)}, name="0d")
add(HARDTANH, {"self": T((0, 3), F32)}, name="empty")
add(HARDTANH, {"self": T((2, 3, 4), F32, dim_order=PERM3)}, name="permuted")
add(HARDTANH, {"self": T((2, 3), U8)}, name="uint8-negative-bound-rejected",
    expect_error="'min_val'")
add(HARDTANH, {"self": T((2, 3), I8), "min_val": -1000, "max_val": 1000},
    name="int8-bound-overflow", expect_error="'min_val'")
add(HARDTANH, {"self": T((2, 3), BOOL)}, name="bool-rejected", expect_error="'self'")

# ---------------------------------------------------------------- tril / triu

for name in ["tril", "triu"]:
    op = f"aten::{name}.out"
    for dt in ALL_DTYPES:
        add(op, {"self": T((4, 5), dt)})
    for diagonal in [-2, -1, 1, 3, 7, -9]:
        add(op, {"self": T((4, 5), F32), "diagonal": diagonal}, name=f"diagonal{diagonal}")
    add(op, {"self": T((2, 3, 4, 3), I32), "diagonal": 1}, name="batched")
    add(op, {"self": T((3, 4), F32, dim_order=(1, 0))}, name="transposed")
    add(op, {"self": T((2, 3, 4), F64, dim_order=PERM3), "diagonal": -1}, name="permuted")
    add(op, {"self": T((0, 3), F32)}, name="empty")
    add(op, {"self": T((3, 0), F32)}, name="empty-columns")
    add(op, {"self": T((2, 3), F32)}, name="resize-out", out_shapes=(3, 2))
    add(op, {"self": T((4,), F32)}, name="1d-rejected", expect_error="'self' has 1 dimensions")
    add(op, {"self": T((2, 2), F32)}, name="float64-out-rejected", out_dtype=F64,
        expect_error="'out'")
