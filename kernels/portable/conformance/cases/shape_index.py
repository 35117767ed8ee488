"""Conformance cases for the data-movement kernels: views as *_copy
(permute, transpose, expand, squeeze, slice, select, view...), joining and
splitting (cat, stack, split, unbind), indexing (index, index_put,
index_select, gather, scatter, slice/select_scatter), padding, conversion
copies (_to_copy, clone, copy), creation (full, zeros, arange...), and
sort/topk.

Movement ops are dtype-agnostic, so each runs over every dtype; each op also
gets negative dims, 0-d and empty tensors, permuted (non-contiguous) inputs,
an out that must be resized, and error cases (bad shapes, dims, and index
values out of range, which must be kernel errors naming the operator and the
argument, never out-of-bounds reads). Where ATen's result is unspecified
(duplicate indices in scatter/index_put without accumulate, ties in topk),
cases avoid it. The prim ops on symbolic sizes (sym_size, executorch_prim::*)
take no out tensor and are tested in C++ (op_prim_scalar_test.cpp).
"""

import random

import torch

from conformance.spec import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, REAL_DTYPES_NO_BOOL, Case,
                              T)

CASES = []
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I16, I8, U8, B8 = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                             torch.bool)
NAN = float("nan")
INF = float("inf")


def _accepts_memory_format():
    try:
        Case("aten::clone.out", {"memory_format": torch.preserve_format})
        return True
    except ValueError:
        return False


# Whether spec.py takes torch.memory_format values; until it does, cases
# passing memory_format are left out (the default, None, still runs).
MEMORY_FORMAT_OK = _accepts_memory_format()


def dn(dtype):
    return str(dtype).replace("torch.", "")


def add(op, args, **kw):
    if not MEMORY_FORMAT_OK and isinstance(args, dict) and "memory_format" in args:
        return
    CASES.append(Case(op, args, **kw))


def no_reference(*args):
    """For error cases whose arguments torch accepts (e.g. a wrong number of
    outs, which only the out variant sees): there is nothing to compare."""
    raise RuntimeError("error case")


def idx(values, dtype=I64):
    """An index tensor with exact values (nested list)."""
    shape = []
    v = values
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0] if v else None
    return T(tuple(shape), dtype, values=values)


def distinct(shape, dtype, seed):
    """A tensor of distinct values (a shuffled range), so sort/topk have no ties."""
    n = 1
    for s in shape:
        n *= s
    values = list(range(n))
    random.Random(seed).shuffle(values)
    if dtype not in (U8,):
        values = [v - n // 2 for v in values]
    if dtype.is_floating_point:
        values = [v * 0.5 for v in values]

    def nest(flat, dims):
        if not dims:
            return flat[0]
        step = len(flat) // dims[0] if dims[0] else 0
        return [nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]
    return T(shape, dtype, values=nest(values, list(shape)))


# ------------------------------------------------------------------ permute / transpose / t

PERMUTE = "aten::permute_copy.out"
for dt in ALL_DTYPES:
    add(PERMUTE, {"self": T((2, 3, 4), dt), "dims": [2, 0, 1]})
add(PERMUTE, {"self": T((2, 3, 4), F32), "dims": [-1, 0, -2]}, name="negative dims")
add(PERMUTE, {"self": T((), F32), "dims": []}, name="0-d")
add(PERMUTE, {"self": T((0, 3), I32), "dims": [1, 0]}, name="empty")
add(PERMUTE, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "dims": [0, 3, 1, 2]},
    name="channels-last input to contiguous")
add(PERMUTE, {"self": T((2, 3, 4, 5), F16, dim_order=(3, 1, 0, 2)), "dims": [1, 0, 3, 2]})
add(PERMUTE, {"self": T((2, 3, 4), F32), "dims": [2, 0, 1]}, out_shapes=[(1, 1, 1)],
    name="out resized")
add(PERMUTE, {"self": T((2, 3), F32), "dims": [0]}, expect_error="dims")
add(PERMUTE, {"self": T((2, 3), F32), "dims": [0, 0]}, expect_error="dims")
add(PERMUTE, {"self": T((2, 3), F32), "dims": [0, 2]}, expect_error="dims")
add(PERMUTE, {"self": T((2, 3), F32), "dims": [1, 0]}, out_dtype=F64, out_shapes=[(3, 2)],
    expect_error="'out'")

TRANSPOSE = "aten::transpose_copy.int_out"
for dt in ALL_DTYPES:
    add(TRANSPOSE, {"self": T((2, 3, 4), dt), "dim0": 0, "dim1": 2})
add(TRANSPOSE, {"self": T((2, 3, 4), F32), "dim0": -1, "dim1": -3})
add(TRANSPOSE, {"self": T((2, 3, 4), F32), "dim0": 1, "dim1": 1}, name="same dim")
add(TRANSPOSE, {"self": T((), F32), "dim0": 0, "dim1": -1}, name="0-d")
add(TRANSPOSE, {"self": T((5,), I64), "dim0": 0, "dim1": 0})
add(TRANSPOSE, {"self": T((0, 4), F32), "dim0": 0, "dim1": 1})
add(TRANSPOSE, {"self": T((2, 3, 4, 5), BF16, dim_order=(0, 2, 3, 1)), "dim0": 1, "dim1": 3})
add(TRANSPOSE, {"self": T((2, 3), F32), "dim0": 0, "dim1": 2}, expect_error="dim1")
add(TRANSPOSE, {"self": T((2, 3), F32), "dim0": -3, "dim1": 0}, expect_error="dim0")

T_COPY = "aten::t_copy.out"
for dt in ALL_DTYPES:
    add(T_COPY, {"self": T((2, 3), dt)})
add(T_COPY, {"self": T((4,), F32)}, name="1-D")
add(T_COPY, {"self": T((), F32)}, name="0-d")
add(T_COPY, {"self": T((0, 4), F32)}, name="empty")
add(T_COPY, {"self": T((3, 2), F64, dim_order=(1, 0))}, name="transposed input")
add(T_COPY, {"self": T((2, 3, 4), F32)}, expect_error="'self'")

# ------------------------------------------------------------------ expand / squeeze / unsqueeze

EXPAND = "aten::expand_copy.out"
for dt in ALL_DTYPES:
    add(EXPAND, {"self": T((3, 1), dt), "size": [2, 3, 4]})
add(EXPAND, {"self": T((3, 1), F32), "size": [-1, 5]}, name="-1 keeps")
add(EXPAND, {"self": T((3, 1), F32), "size": [3, 1]}, name="same")
add(EXPAND, {"self": T((), F32), "size": [2, 2]}, name="0-d")
add(EXPAND, {"self": T((), F32), "size": []}, name="0-d to 0-d")
add(EXPAND, {"self": T((0, 1), F32), "size": [0, 3]}, name="empty")
add(EXPAND, {"self": T((1, 3), F32), "size": [2, 0, 3]}, name="new zero dim")
add(EXPAND, {"self": T((1, 3, 1, 2), I16, dim_order=(0, 2, 3, 1)), "size": [4, 3, 2, 2]})
add(EXPAND, {"self": T((3, 1), F32), "size": [3]}, expect_error="size")
add(EXPAND, {"self": T((3, 2), F32), "size": [3, 4]}, expect_error="size")
add(EXPAND, {"self": T((3,), F32), "size": [-1, 3]}, expect_error="size")

SQUEEZE = "aten::squeeze_copy.out"
SQUEEZE_DIM = "aten::squeeze_copy.dim_out"
SQUEEZE_DIMS = "aten::squeeze_copy.dims_out"
for dt in ALL_DTYPES:
    add(SQUEEZE, {"self": T((1, 3, 1, 2), dt)})
    add(SQUEEZE_DIM, {"self": T((2, 1, 3), dt), "dim": 1})
    add(SQUEEZE_DIMS, {"self": T((1, 2, 1, 3, 1), dt), "dim": [0, 4]})
add(SQUEEZE, {"self": T((), F32)}, name="0-d")
add(SQUEEZE, {"self": T((1, 1), F32)}, name="all ones to 0-d")
add(SQUEEZE, {"self": T((0, 1), F32)}, name="empty")
add(SQUEEZE, {"self": T((2, 1, 3, 1), F32, dim_order=(3, 1, 0, 2))}, name="permuted input")
add(SQUEEZE_DIM, {"self": T((2, 1, 3), F32), "dim": -2}, name="negative dim")
add(SQUEEZE_DIM, {"self": T((2, 3), F32), "dim": 1}, name="not size 1: unchanged")
add(SQUEEZE_DIM, {"self": T((), F32), "dim": -1}, name="0-d")
add(SQUEEZE_DIM, {"self": T((2, 3), F32), "dim": 2}, expect_error="dim")
add(SQUEEZE_DIMS, {"self": T((1, 2, 1), F32), "dim": [-1, 1]}, name="negative and non-1")
add(SQUEEZE_DIMS, {"self": T((1, 2, 1), F32), "dim": []}, name="no dims")
add(SQUEEZE_DIMS, {"self": T((), F32), "dim": [0]}, name="0-d")
add(SQUEEZE_DIMS, {"self": T((1, 2), F32), "dim": [0, 0]}, expect_error="dim")
add(SQUEEZE_DIMS, {"self": T((1, 2), F32), "dim": [3]}, expect_error="dim")

UNSQUEEZE = "aten::unsqueeze_copy.out"
for dt in ALL_DTYPES:
    add(UNSQUEEZE, {"self": T((2, 3), dt), "dim": 1})
for d in (0, 2, -1, -3):
    add(UNSQUEEZE, {"self": T((2, 3), F32), "dim": d})
add(UNSQUEEZE, {"self": T((), F32), "dim": 0}, name="0-d")
add(UNSQUEEZE, {"self": T((), F32), "dim": -1}, name="0-d negative")
add(UNSQUEEZE, {"self": T((0, 3), F32), "dim": 1}, name="empty")
add(UNSQUEEZE, {"self": T((2, 3, 4), F32, dim_order=(2, 0, 1)), "dim": 3})
add(UNSQUEEZE, {"self": T((2, 3), F32), "dim": 3}, expect_error="dim")
add(UNSQUEEZE, {"self": T((2, 3), F32), "dim": -4}, expect_error="dim")

# ------------------------------------------------------------------ slice / select / narrow views

SLICE = "aten::slice_copy.Tensor_out"
for dt in ALL_DTYPES:
    add(SLICE, {"self": T((4, 5), dt), "dim": 1, "start": 1, "end": 4, "step": 2})
SLICE_VARIANTS = [
    (0, None, None, 1), (1, None, 3, 1), (1, 2, None, 1), (1, -3, -1, 1), (-1, -100, 100, 2),
    (1, 4, 2, 1), (1, 7, 9, 1), (0, 0, 4, 3), (1, 0, 0, 1), (1, -2, None, 5),
]
for dim, start, end, step in SLICE_VARIANTS:
    add(SLICE, {"self": T((4, 5), F32), "dim": dim, "start": start, "end": end, "step": step})
add(SLICE, {"self": T((0, 5), F32), "dim": 0, "start": 0, "end": 2, "step": 1}, name="empty")
add(SLICE, {"self": T((2, 6, 3, 2), F32, dim_order=(0, 2, 3, 1)), "dim": 1, "start": 1, "end": 6,
            "step": 2}, name="channels-last")
add(SLICE, {"self": T((4, 5), F32), "dim": 1, "start": 1, "end": 4, "step": 2},
    out_shapes=[(4, 5)], name="out resized")
add(SLICE, {"self": T((4, 5), F32), "dim": 1, "start": 0, "end": 4, "step": 0},
    expect_error="step")
add(SLICE, {"self": T((4, 5), F32), "dim": 1, "start": 0, "end": 4, "step": -1},
    expect_error="step")
add(SLICE, {"self": T((4, 5), F32), "dim": 2, "start": 0, "end": 4, "step": 1},
    expect_error="dim")
add(SLICE, {"self": T((), F32), "dim": 0, "start": 0, "end": 1, "step": 1}, out_shapes=[()],
    expect_error="self")

SELECT = "aten::select_copy.int_out"
for dt in ALL_DTYPES:
    add(SELECT, {"self": T((3, 4), dt), "dim": 1, "index": 2})
add(SELECT, {"self": T((3, 4), F32), "dim": -2, "index": -1}, name="negative dim and index")
add(SELECT, {"self": T((3,), F32), "dim": 0, "index": 1}, name="to 0-d")
add(SELECT, {"self": T((3, 0), F32), "dim": 0, "index": 2}, name="empty rows")
add(SELECT, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "dim": 1, "index": 1})
add(SELECT, {"self": T((3, 4), F32), "dim": 1, "index": 4}, out_shapes=[(3,)],
    expect_error="index 4 is out of bounds")
add(SELECT, {"self": T((3, 4), F32), "dim": 1, "index": -5}, out_shapes=[(3,)],
    expect_error="'index'")
add(SELECT, {"self": T((), F32), "dim": 0, "index": 0}, expect_error="self")

DIAGONAL = "aten::diagonal_copy.out"
for dt in ALL_DTYPES:
    add(DIAGONAL, {"self": T((3, 4), dt)})
for offset, d1, d2 in [(1, 0, 1), (-1, 0, 1), (2, 1, 0), (-2, -1, 0), (5, 0, 1), (-7, 0, 1),
                       (0, 2, 0), (1, -1, 1)]:
    add(DIAGONAL, {"self": T((3, 4, 5), F32), "offset": offset, "dim1": d1, "dim2": d2})
add(DIAGONAL, {"self": T((0, 3), F32)}, name="empty")
add(DIAGONAL, {"self": T((2, 3, 4, 4), F32, dim_order=(0, 2, 3, 1)), "dim1": 2, "dim2": 3})
add(DIAGONAL, {"self": T((3, 4), F32), "dim1": 1, "dim2": 1}, expect_error="dim2")
add(DIAGONAL, {"self": T((3,), F32)}, expect_error="self")

UNFOLD = "aten::unfold_copy.out"
for dt in ALL_DTYPES:
    add(UNFOLD, {"self": T((3, 7), dt), "dimension": 1, "size": 3, "step": 2})
for dim, size, step in [(0, 3, 1), (-1, 7, 1), (1, 0, 1), (1, 1, 5), (0, 2, 3)]:
    add(UNFOLD, {"self": T((3, 7), F32), "dimension": dim, "size": size, "step": step})
add(UNFOLD, {"self": T((), F32), "dimension": 0, "size": 1, "step": 1}, name="0-d")
add(UNFOLD, {"self": T((4, 6), F32, dim_order=(1, 0)), "dimension": 0, "size": 2, "step": 2})
add(UNFOLD, {"self": T((3, 7), F32), "dimension": 1, "size": 8, "step": 1}, expect_error="size")
add(UNFOLD, {"self": T((3, 7), F32), "dimension": 1, "size": 2, "step": 0}, expect_error="step")
add(UNFOLD, {"self": T((3, 7), F32), "dimension": 2, "size": 2, "step": 1},
    expect_error="dimension")

# ------------------------------------------------------------------ plain copies

for op in ("aten::alias_copy.out", "aten::detach_copy.out", "aten::lift_fresh_copy.out"):
    for dt in ALL_DTYPES:
        add(op, {"self": T((2, 3), dt)})
    add(op, {"self": T((), F32)}, name="0-d")
    add(op, {"self": T((0, 2), F32)}, name="empty")
    add(op, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1))}, name="channels-last")
    add(op, {"self": T((2, 3), F32)}, out_dtype=I32, expect_error="'out'")

CLONE = "aten::clone.out"
for dt in ALL_DTYPES:
    add(CLONE, {"self": T((2, 3), dt)})
    add(CLONE, {"self": T((2, 3, 4, 5), dt, dim_order=(0, 2, 3, 1)),
                "memory_format": torch.preserve_format}, name=f"{dn(dt)} preserve channels-last")
add(CLONE, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)),
            "memory_format": torch.contiguous_format}, name="channels-last to contiguous")
add(CLONE, {"self": T((2, 3, 4, 5), F32), "memory_format": torch.channels_last},
    name="contiguous to channels-last")
add(CLONE, {"self": T((), F64)}, name="0-d")
add(CLONE, {"self": T((0, 3), F32)}, name="empty")
add(CLONE, {"self": T((2, 3), F32)}, out_shapes=[(6,)], expect_error="out")
add(CLONE, {"self": T((2, 3), F32)}, out_dtype=F64, expect_error="'out'")
add(CLONE, {"self": T((2, 3, 4), F32), "memory_format": torch.channels_last},
    expect_error="memory_format")

TO_COPY = "aten::_to_copy.out"


def to_copy_ref(dtype):
    """The functional _to_copy, given the dtype the out variant leaves to out."""
    return lambda self, non_blocking, memory_format: torch.ops.aten._to_copy.default(
        self, dtype=dtype, memory_format=memory_format)


def to_copy(args, dtype, **kw):
    add(TO_COPY, args, out_dtype=dtype, reference=to_copy_ref(dtype), **kw)


for src in ALL_DTYPES:
    for dst in ALL_DTYPES:
        # Negative floats into uint8 are undefined in C++ (ATen's result
        # depends on the CPU path): keep those non-negative.
        low = 0 if (src.is_floating_point and dst == U8) else None
        to_copy({"self": T((2, 5), src, low=low)}, dst, name=f"{dn(src)} to {dn(dst)}")
to_copy({"self": T((3,), F32, values=[1.9, -1.9, 0.5])}, I32, name="truncates toward zero")
to_copy({"self": T((4,), F32, values=[0.0, -0.0, NAN, 2.0])}, B8, name="to bool is nonzero")
to_copy({"self": T((3,), I64, values=[300, -1, 255])}, U8, name="int wraps")
to_copy({"self": T((3,), F64, values=[1e-8, 65504.0, 1e5])}, F16, name="float16 range")
to_copy({"self": T((3,), F32, values=[INF, -INF, NAN])}, BF16, name="specials")
to_copy({"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1))}, F16, name="channels-last kept")
to_copy({"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)),
         "memory_format": torch.preserve_format}, F16, name="channels-last preserved")
to_copy({"self": T((2, 3, 4, 5), F32), "memory_format": torch.channels_last}, F64,
        name="to channels-last")
to_copy({"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)),
         "memory_format": torch.contiguous_format}, I32, name="to contiguous")
to_copy({"self": T((), F32)}, I64, name="0-d")
to_copy({"self": T((0, 4), F32)}, F16, name="empty")
to_copy({"self": T((2, 3), F32)}, F32, out_shapes=[(2, 2)], name="out resized")
add(TO_COPY, {"self": T((2, 3), F32), "memory_format": torch.channels_last},
    expect_error="memory_format")

COPY = "aten::copy.out"
for dt in ALL_DTYPES:
    add(COPY, {"self": T((2, 3), dt), "src": T((2, 3), dt)})
    add(COPY, {"self": T((2, 3), dt), "src": T((3,), F32 if dt != F32 else I32)},
        name=f"{dn(dt)} broadcast and convert")
add(COPY, {"self": T((2, 3), F32), "src": T((), I64)}, name="0-d src")
add(COPY, {"self": T((), F32), "src": T((), F64)}, name="0-d")
add(COPY, {"self": T((0, 3), F32), "src": T((1, 3), F32)}, name="empty")
add(COPY, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)),
           "src": T((3, 1, 5), F16, dim_order=(2, 0, 1))}, name="layouts")
add(COPY, {"self": T((2, 3), F32), "src": T((4,), F32)}, expect_error="src")
add(COPY, {"self": T((2, 3), F32), "src": T((2, 3), F32)}, out_dtype=F64, expect_error="'out'")

# ------------------------------------------------------------------ view / flip / roll / repeat

VIEW = "aten::view_copy.out"
UNSAFE_VIEW = "aten::_unsafe_view.out"
for dt in ALL_DTYPES:
    add(VIEW, {"self": T((2, 6), dt), "size": [3, 4]})
for size in ([12], [-1], [4, -1], [-1, 2, 3], [1, 12, 1], [2, 2, 3]):
    add(VIEW, {"self": T((2, 6), F32), "size": size})
add(VIEW, {"self": T((), F32), "size": [1]}, name="0-d to [1]")
add(VIEW, {"self": T((1, 1), F32), "size": []}, name="to 0-d")
add(VIEW, {"self": T((0, 3), F32), "size": [3, 0]}, name="empty")
add(VIEW, {"self": T((0, 3), F32), "size": [-1, 6]}, name="empty inferred")
add(UNSAFE_VIEW, {"self": T((2, 6), I8), "size": [4, 3]})
add(UNSAFE_VIEW, {"self": T((2, 6), F32), "size": [-1]})
add(VIEW, {"self": T((2, 6), F32), "size": [5, 3]}, expect_error="size")
add(VIEW, {"self": T((2, 6), F32), "size": [-1, -1]}, expect_error="size")
add(VIEW, {"self": T((0, 6), F32), "size": [0, -1]}, out_shapes=[(0, 1)], expect_error="size")
add(VIEW, {"self": T((2, 6), F32), "size": [-2, 6]}, expect_error="size")

FLIP = "aten::flip.out"
for dt in ALL_DTYPES:
    add(FLIP, {"self": T((2, 3, 4), dt), "dims": [0, 2]})
add(FLIP, {"self": T((2, 3, 4), F32), "dims": [-1]}, name="negative")
add(FLIP, {"self": T((2, 3, 4), F32), "dims": []}, name="no dims")
add(FLIP, {"self": T((2, 3, 4), F32), "dims": [0, 1, 2]}, name="all")
add(FLIP, {"self": T((), F32), "dims": [0]}, name="0-d")
add(FLIP, {"self": T((0, 3), F32), "dims": [1]}, name="empty")
add(FLIP, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "dims": [1, 3]})
add(FLIP, {"self": T((2, 3), F32), "dims": [0, -2]}, expect_error="dims")
add(FLIP, {"self": T((2, 3), F32), "dims": [2]}, expect_error="dims")

ROLL = "aten::roll.out"
for dt in ALL_DTYPES:
    add(ROLL, {"self": T((3, 4), dt), "shifts": [1, -1], "dims": [0, 1]})
for shifts, dims in ([[2], [1]], [[-5], [1]], [[9], [0]], [[0], [1]], [[1, 2], [1, 1]],
                     [[3], []], [[-7], []], [[1, 1, 1], [0, 1, 2]]):
    add(ROLL, {"self": T((3, 4, 2), F32), "shifts": shifts, "dims": dims})
add(ROLL, {"self": T((), F32), "shifts": [3], "dims": []}, name="0-d")
add(ROLL, {"self": T((0, 3), F32), "shifts": [1], "dims": [1]}, name="empty")
add(ROLL, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "shifts": [1, 2], "dims": [1, 3]})
add(ROLL, {"self": T((2, 3, 4), I16, dim_order=(2, 1, 0)), "shifts": [5], "dims": []},
    name="flattened permuted")
add(ROLL, {"self": T((3, 4), F32), "shifts": [1, 2], "dims": [0]}, expect_error="shifts")
add(ROLL, {"self": T((3, 4), F32), "shifts": [1, 2], "dims": []}, expect_error="shifts")
add(ROLL, {"self": T((3, 4), F32), "shifts": [1], "dims": [2]}, expect_error="dims")

REPEAT = "aten::repeat.out"
for dt in ALL_DTYPES:
    add(REPEAT, {"self": T((2, 3), dt), "repeats": [2, 1, 3]})
for repeats in ([1, 1], [3, 2], [0, 2], [2, 1, 1, 2]):
    add(REPEAT, {"self": T((2, 3), F32), "repeats": repeats})
add(REPEAT, {"self": T((), F32), "repeats": [2, 3]}, name="0-d")
add(REPEAT, {"self": T((), F32), "repeats": []}, name="0-d no repeats")
add(REPEAT, {"self": T((0, 3), F32), "repeats": [2, 2]}, name="empty")
add(REPEAT, {"self": T((2, 3, 2, 2), F32, dim_order=(0, 2, 3, 1)), "repeats": [1, 2, 1, 2]})
add(REPEAT, {"self": T((2, 3), F32), "repeats": [2]}, expect_error="repeats")
add(REPEAT, {"self": T((2, 3), F32), "repeats": [2, -1]}, expect_error="repeats")

# ------------------------------------------------------------------ padding

PAD = "aten::constant_pad_nd.out"
for dt in ALL_DTYPES:
    add(PAD, {"self": T((2, 3), dt), "pad": [1, 2, 0, 1], "value": True if dt == B8 else 3})
for pad in ([1, 1], [0, 0], [-1, 2], [2, -3], [1, 0, 1, 0, 1, 0], [-1, -1, 1, 1]):
    add(PAD, {"self": T((2, 3, 4), F32), "pad": pad, "value": -1.5})
add(PAD, {"self": T((2, 3), F32), "pad": [-3, 1]}, name="all cropped")
add(PAD, {"self": T((2, 3), I32), "pad": [1, 1], "value": 2.7}, name="float value into int")
add(PAD, {"self": T((0, 3), F32), "pad": [1, 1]}, name="empty")
add(PAD, {"self": T((), F32), "pad": []}, name="0-d")
add(PAD, {"self": T((1, 2, 3, 4), F32, dim_order=(0, 2, 3, 1)), "pad": [1, 1, 2, 0]},
    name="channels-last")
add(PAD, {"self": T((2, 3), F32), "pad": [1]}, expect_error="pad")
add(PAD, {"self": T((2, 3), F32), "pad": [1, 1, 1, 1, 1, 1]}, expect_error="pad")
add(PAD, {"self": T((2, 3), F32), "pad": [-2, -2]}, expect_error="pad")
add(PAD, {"self": T((2, 3), I8), "pad": [1, 1], "value": 300}, expect_error="value")

for mode in ("reflection", "replication"):
    for k in (1, 2, 3):
        op = f"aten::{mode}_pad{k}d.out"
        base = (2, 3, 4, 5, 4)[:k + 1]  # (C, W) / (C, H, W) / (C, D, H, W)
        pads = [1, 2, 2, 1, 1, 0][:2 * k]
        for dt in REAL_DTYPES_NO_BOOL:
            add(op, {"self": T(base, dt), "padding": pads})
        add(op, {"self": T((2,) + base, F32), "padding": pads}, name="batched")
        add(op, {"self": T((0,) + base, F32), "padding": pads}, name="empty batch")
        add(op, {"self": T(base, F32), "padding": [-1, 2] + pads[2:]}, name="negative")
        add(op, {"self": T(base, F32), "padding": [0] * (2 * k)}, name="zero")
        if k == 2:
            add(op, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "padding": pads},
                name="channels-last")
        add(op, {"self": T(base, B8), "padding": pads}, expect_error="self")
        add(op, {"self": T(base, F32), "padding": pads[:-1]}, expect_error="padding")
        add(op, {"self": T((3,) * (k + 3), F32), "padding": pads}, expect_error="self")
        add(op, {"self": T(base[:-1] + (0,), F32), "padding": pads}, expect_error="self")
        add(op, {"self": T(base, F32), "padding": [-5, 0] + pads[2:]}, expect_error="padding")
        if mode == "reflection":
            add(op, {"self": T(base, F32), "padding": [base[-1], 0] + pads[2:]},
                expect_error="padding")

# ------------------------------------------------------------------ creation

FULL = "aten::full.out"


# The creation ops' functional forms take the dtype that out gives the out
# variants, so their references are spelled out.
def full(args, dtype, **kw):
    add(FULL, args, out_dtype=dtype, **kw,
        reference=lambda size, fill_value: torch.full(size, fill_value, dtype=dtype))


for dt in ALL_DTYPES:
    value = True if dt == B8 else (2.5 if dt.is_floating_point else -3 if dt != U8 else 7)
    full({"size": [2, 3], "fill_value": value}, dt)
full({"size": [], "fill_value": 1.5}, F64, name="0-d")
full({"size": [0, 3], "fill_value": 1}, I32, name="empty")
full({"size": [2], "fill_value": 1.5}, I8, name="float truncates")
full({"size": [2], "fill_value": -1}, U8, name="uint8 -1")
full({"size": [2], "fill_value": 2}, B8, name="bool from int")
full({"size": [2], "fill_value": INF}, F16, name="inf")
full({"size": [2, 3], "fill_value": 1.0}, F32, out_shapes=[(1, 1)], name="out resized")
add(FULL, {"size": [2], "fill_value": 300}, out_dtype=I8, out_shapes=[(2,)],
    expect_error="fill_value")
add(FULL, {"size": [2], "fill_value": 1e6}, out_dtype=F16, out_shapes=[(2,)],
    expect_error="fill_value")
add(FULL, {"size": [2], "fill_value": NAN}, out_dtype=I32, out_shapes=[(2,)],
    expect_error="fill_value")
add(FULL, {"size": [2, -1], "fill_value": 1}, out_dtype=I32, out_shapes=[(2, 1)],
    expect_error="size")

FULL_LIKE = "aten::full_like.out"

def full_like_ref(self, fill_value, memory_format):
    return torch.full_like(self, fill_value, memory_format=memory_format or torch.preserve_format)


for dt in ALL_DTYPES:
    add(FULL_LIKE, {"self": T((2, 3), dt), "fill_value": True if dt == B8 else 5},
        reference=full_like_ref)
add(FULL_LIKE, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "fill_value": -2.0},
    name="channels-last", reference=full_like_ref)
add(FULL_LIKE, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "fill_value": -2.0,
                "memory_format": torch.contiguous_format}, name="to contiguous",
    reference=full_like_ref)
add(FULL_LIKE, {"self": T((), F32), "fill_value": 7}, name="0-d", reference=full_like_ref)
add(FULL_LIKE, {"self": T((2, 3), U8), "fill_value": 256}, expect_error="fill_value")

for op, fn in (("aten::zeros.out", torch.zeros), ("aten::ones.out", torch.ones)):
    def sized(args, dtype, fn=fn, op=op, **kw):
        add(op, args, out_dtype=dtype, reference=lambda size: fn(size, dtype=dtype), **kw)
    for dt in ALL_DTYPES:
        sized({"size": [3, 2]}, dt)
    sized({"size": []}, F32, name="0-d")
    sized({"size": [2, 0]}, F32, name="empty")
    sized({"size": [4]}, F32, out_shapes=[(1,)], name="out resized")
    add(op, {"size": [-4]}, out_dtype=F32, out_shapes=[(1,)], expect_error="size")
for op, fn in (("aten::zeros_like.out", torch.zeros_like),
               ("aten::ones_like.out", torch.ones_like)):
    def like(args, fn=fn, op=op, **kw):
        add(op, args, **kw, reference=lambda self, memory_format: fn(
            self, memory_format=memory_format or torch.preserve_format))
    for dt in ALL_DTYPES:
        like({"self": T((3, 2), dt)})
    like({"self": T((2, 3, 4, 5), F16, dim_order=(0, 2, 3, 1))}, name="channels-last")
    like({"self": T((), I64)}, name="0-d")
    like({"self": T((0, 2), F32)}, name="empty")

SCALAR_TENSOR = "aten::scalar_tensor.out"


def scalar_tensor(args, dtype, **kw):
    add(SCALAR_TENSOR, args, out_dtype=dtype,
        reference=lambda s: torch.scalar_tensor(s, dtype=dtype), **kw)


for dt in ALL_DTYPES:
    scalar_tensor({"s": True if dt == B8 else 3}, dt)
scalar_tensor({"s": 2.75}, F32, name="double")
scalar_tensor({"s": 2.75}, I32, name="double into int")
add(SCALAR_TENSOR, {"s": 300}, out_dtype=I8, out_shapes=[()], expect_error="'s'")

ARANGE = "aten::arange.out"
ARANGE_START = "aten::arange.start_out"


def arange(args, dtype, **kw):
    add(ARANGE, args, out_dtype=dtype, reference=lambda end: torch.arange(end, dtype=dtype), **kw)


def arange_start(args, dtype, **kw):
    add(ARANGE_START, args, out_dtype=dtype,
        reference=lambda start, end, step: torch.arange(start, end, step, dtype=dtype), **kw)


for dt in REAL_DTYPES_NO_BOOL:
    arange({"end": 7}, dt)
    arange_start({"start": 2, "end": 11, "step": 3}, dt)
    arange_start({"start": 10, "end": -3, "step": -4}, dt)
for dt in FLOAT_DTYPES:
    arange_start({"start": 0.0, "end": 1.0, "step": 0.1}, dt, name=f"{dn(dt)} 0.1")
    arange_start({"start": -1.5, "end": 2.25, "step": 0.25}, dt)
arange({"end": 5.5}, F32, name="float end")
arange({"end": 0}, F32, name="empty")
arange_start({"start": 3, "end": 3, "step": 1}, I64, name="empty range")
arange_start({"start": 0.5, "end": 3, "step": 1}, I32, name="start truncated")
arange_start({"start": -5, "end": 5, "step": 1}, U8, name="uint8 wraps")
arange_start({"start": 0, "end": 10, "step": 2}, I64, out_shapes=[(1,)], name="out resized")
add(ARANGE_START, {"start": 0, "end": 5, "step": 0}, out_dtype=F32, out_shapes=[(5,)],
    expect_error="step")
add(ARANGE_START, {"start": 0, "end": 5, "step": 0.5}, out_dtype=I32, out_shapes=[(5,)],
    expect_error="step")
add(ARANGE_START, {"start": 0, "end": 5, "step": -1}, out_dtype=F32, out_shapes=[(5,)],
    expect_error="step")
add(ARANGE, {"end": 3}, out_dtype=B8, out_shapes=[(3,)], expect_error="out")
add(ARANGE, {"end": 5}, name="default int64", reference=lambda end: torch.arange(end))

FILL = "aten::fill.Scalar_out"
FILL_TENSOR = "aten::fill.Tensor_out"
for dt in ALL_DTYPES:
    add(FILL, {"self": T((2, 3), dt), "value": True if dt == B8 else 4})
    add(FILL_TENSOR, {"self": T((2, 3), dt), "value": T((), dt)})
add(FILL, {"self": T((2, 3), I32), "value": 2.7}, name="float into int")
add(FILL, {"self": T((2, 3, 4, 5), F16, dim_order=(0, 2, 3, 1)), "value": -1.5},
    name="channels-last")
add(FILL, {"self": T((), F64), "value": 3}, name="0-d")
add(FILL, {"self": T((0, 2), F32), "value": 3}, name="empty")
add(FILL_TENSOR, {"self": T((2, 3), I32), "value": T((), F32, values=2.7)},
    name="float tensor into int")
add(FILL_TENSOR, {"self": T((2, 3), F32), "value": T((), B8, values=True)}, name="bool value")
add(FILL, {"self": T((2,), F16), "value": 1e6}, expect_error="value")
add(FILL_TENSOR, {"self": T((2,), F32), "value": T((1,), F32)}, expect_error="value")

# ------------------------------------------------------------------ cat / stack / split / unbind

CAT = "aten::cat.out"
for dt in ALL_DTYPES:
    add(CAT, {"tensors": [T((2, 3), dt), T((2, 1), dt), T((2, 2), dt)], "dim": 1})
add(CAT, {"tensors": [T((2, 3), F32), T((4, 3), F32)]}, name="dim 0 default")
add(CAT, {"tensors": [T((2, 3, 2), F32), T((2, 1, 2), F32)], "dim": -2}, name="negative dim")
add(CAT, {"tensors": [T((2, 3), F32)], "dim": 1}, name="one tensor")
add(CAT, {"tensors": [T((2, 3), I8), T((2, 3), F16), T((2, 3), I64)]}, name="promotes")
add(CAT, {"tensors": [T((2, 3), B8), T((1, 3), U8)]}, name="bool and uint8")
add(CAT, {"tensors": [T((0,), F32), T((2, 3), F32), T((0,), I64)], "dim": 1},
    name="legacy empty 1-D skipped")
add(CAT, {"tensors": [T((0,), F32), T((0,), F32)]}, name="only legacy empties")
add(CAT, {"tensors": [T((2, 0), F32), T((2, 3), F32)], "dim": 1}, name="empty along dim")
add(CAT, {"tensors": [T((0, 3), F32), T((2, 3), F32)], "dim": 0}, name="empty rows")
add(CAT, {"tensors": [T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), T((2, 1, 4, 5), F32)],
          "dim": 1}, name="channels-last input")
add(CAT, {"tensors": [T((2, 3), I32), T((2, 3), I32)]}, out_dtype=I64, name="into wider out")
add(CAT, {"tensors": [T((2, 3), F32), T((2, 1), F32)], "dim": 1}, out_shapes=[(1, 1)],
    name="out resized")
add(CAT, {"tensors": [T((2, 3), F32), T((3, 3), F32)], "dim": 1}, out_shapes=[(2, 6)],
    expect_error="tensors", out_dtype=F32)
add(CAT, {"tensors": [T((2, 3), F32), T((2, 3, 1), F32)]}, out_shapes=[(4, 3)],
    expect_error="tensors", out_dtype=F32)
add(CAT, {"tensors": [T((), F32), T((), F32)]}, out_shapes=[(2,)], expect_error="tensors",
    out_dtype=F32)
add(CAT, {"tensors": [T((2, 3), F32)], "dim": 2}, out_dtype=F32, out_shapes=[(2, 3)],
    expect_error="dim")
add(CAT, {"tensors": [T((2, 3), F32), T((2, 3), F32)]}, out_dtype=I32, out_shapes=[(4, 3)],
    expect_error="out")

STACK = "aten::stack.out"
for dt in ALL_DTYPES:
    add(STACK, {"tensors": [T((2, 3), dt), T((2, 3), dt), T((2, 3), dt)], "dim": 1})
for d in (0, 2, -1, -3):
    add(STACK, {"tensors": [T((2, 3), F32), T((2, 3), F32)], "dim": d})
add(STACK, {"tensors": [T((), F32), T((), F32)]}, name="0-d")
add(STACK, {"tensors": [T((0, 3), F32)], "dim": 1}, name="empty")
add(STACK, {"tensors": [T((2, 3), I16), T((2, 3), F64)]}, name="promotes")
add(STACK, {"tensors": [T((2, 3, 4), F32, dim_order=(2, 0, 1)), T((2, 3, 4), F32)], "dim": 2})
add(STACK, {"tensors": [T((2, 3), F32), T((3, 2), F32)]}, out_shapes=[(2, 2, 3)],
    expect_error="tensors", out_dtype=F32)
add(STACK, {"tensors": [T((2, 3), F32)], "dim": 3}, out_shapes=[(1, 2, 3)], expect_error="dim",
    out_dtype=F32)

SPLIT = "aten::split_copy.Tensor_out"
for dt in ALL_DTYPES:
    add(SPLIT, {"self": T((5, 2), dt), "split_size": 2})
add(SPLIT, {"self": T((3, 7), F32), "split_size": 3, "dim": -1}, name="negative dim")
add(SPLIT, {"self": T((3, 4), F32), "split_size": 9, "dim": 1}, name="one piece")
add(SPLIT, {"self": T((3, 4), F32), "split_size": 1, "dim": 1}, name="ones")
add(SPLIT, {"self": T((0, 4), F32), "split_size": 0}, name="empty dim, size 0")
add(SPLIT, {"self": T((0, 4), F32), "split_size": 2}, name="empty dim")
add(SPLIT, {"self": T((4, 6, 2), F32, dim_order=(2, 0, 1)), "split_size": 4, "dim": 1})
add(SPLIT, {"self": T((4, 2), F32), "split_size": 0}, out_shapes=[(4, 2)],
    expect_error="split_size")
add(SPLIT, {"self": T((4, 2), F32), "split_size": 3}, out_shapes=[(3, 2)], expect_error="out",
    reference=no_reference, name="too few outs")
add(SPLIT, {"self": T((), F32), "split_size": 1}, out_shapes=[()], expect_error="self")

SPLIT_SIZES = "aten::split_with_sizes_copy.out"
for dt in ALL_DTYPES:
    add(SPLIT_SIZES, {"self": T((6, 2), dt), "split_sizes": [1, 3, 2]})
add(SPLIT_SIZES, {"self": T((2, 5), F32), "split_sizes": [0, 5, 0], "dim": -1}, name="zeros")
add(SPLIT_SIZES, {"self": T((2, 5), F32), "split_sizes": [5], "dim": 1}, name="one piece")
add(SPLIT_SIZES, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "split_sizes": [2, 1],
                  "dim": 1})
add(SPLIT_SIZES, {"self": T((6, 2), F32), "split_sizes": [1, 3]}, out_shapes=[(1, 2), (3, 2)],
    expect_error="split_sizes")
add(SPLIT_SIZES, {"self": T((6, 2), F32), "split_sizes": [7, -1]}, out_shapes=[(7, 2), (0, 2)],
    expect_error="split_sizes")

UNBIND = "aten::unbind_copy.int_out"
for dt in ALL_DTYPES:
    add(UNBIND, {"self": T((3, 2), dt)})
add(UNBIND, {"self": T((2, 3, 4), F32), "dim": -1}, name="negative dim")
add(UNBIND, {"self": T((2, 3), F32), "dim": 1})
add(UNBIND, {"self": T((2, 0), F32), "dim": 0}, name="empty rows")
add(UNBIND, {"self": T((2, 3, 4, 2), F32, dim_order=(0, 2, 3, 1)), "dim": 1})
add(UNBIND, {"self": T((), F32)}, out_shapes=[()], expect_error="self")
add(UNBIND, {"self": T((3, 2), F32)}, out_shapes=[(2,), (2,)], expect_error="out",
    reference=no_reference, name="too few outs")

# ------------------------------------------------------------------ advanced indexing

INDEX = "aten::index.Tensor_out"
for dt in ALL_DTYPES:
    add(INDEX, {"self": T((3, 4), dt), "indices": [idx([2, 0, 2])]})
    add(INDEX, {"self": T((3, 4), dt), "indices": [T((3, 4), B8)]}, name=f"{dn(dt)} mask")
X = T((3, 4, 5), F32)
INDEX_VARIANTS = [
    ("int32", [idx([1, -1], I32)]),
    ("negative", [idx([-3, -1])]),
    ("second dim", [None, idx([3, 0])]),
    ("last dim", [None, None, idx([[4, 0], [1, 1]])]),
    ("two adjacent", [idx([0, 2]), idx([3, 1])]),
    ("two broadcast", [idx([[0], [2]]), idx([3, 1, 0])]),
    ("non-adjacent", [idx([0, 2]), None, idx([4, 1])]),
    ("non-adjacent broadcast", [idx([[1], [2]]), None, idx([0, 3, 4])]),
    ("all three", [idx([0, 1]), idx([1, 2]), idx([2, 3])]),
    ("0-d index", [idx(1)]),
    ("0-d and 1-D", [None, idx(2), idx([1, 4])]),
    ("empty index", [idx([])]),
    ("2-D mask", [T((3, 4), B8)]),
    ("mask in the middle", [None, T((4, 5), B8)]),
    ("uint8 mask", [T((3,), U8, values=[1, 0, 1])]),
    ("mask and index", [T((3,), B8, values=[False, True, False]), idx([0, 3, 2])]),
    ("mask and index broadcast", [T((3,), B8, values=[True, False, True]), idx([[1], [3]])]),
    ("all-false mask", [T((3,), B8, values=[False, False, False])]),
    ("permuted mask", [T((3, 4), B8, dim_order=(1, 0))]),
    ("permuted mask after None", [None, T((4, 5), B8, dim_order=(1, 0))]),
]
for name, indices in INDEX_VARIANTS:
    add(INDEX, {"self": X, "indices": indices}, name=name)
add(INDEX, {"self": T((3, 4, 5), I16, dim_order=(2, 0, 1)), "indices": [None, idx([3, 1])]},
    name="permuted self")
add(INDEX, {"self": T((3, 4), F32),
            "indices": [T((2, 2), I64, values=[[0, 2], [1, 1]], dim_order=(1, 0))]},
    name="permuted index")
add(INDEX, {"self": T((0, 4), F32), "indices": [None, idx([1, 3])]}, name="empty self")
add(INDEX, {"self": T((3, 4), F32), "indices": [idx([0, 3])]}, out_shapes=[(2, 4)],
    expect_error="index 3 is out of bounds for dimension 0 with size 3")
add(INDEX, {"self": T((3, 4), F32), "indices": [None, idx([-5])]}, out_shapes=[(3, 1)],
    expect_error="'indices'")
add(INDEX, {"self": T((3, 4), F32), "indices": [T((2,), F32, values=[0.0, 1.0])]},
    out_shapes=[(2, 4)], expect_error="indices")
add(INDEX, {"self": T((3, 4), F32), "indices": [T((4,), B8)]}, out_shapes=[(2, 4)],
    expect_error="indices")
add(INDEX, {"self": T((3, 4), F32), "indices": [idx([0, 1]), idx([0, 1, 2])]},
    out_shapes=[(2,)], expect_error="indices")
add(INDEX, {"self": T((3,), F32), "indices": [idx([0]), idx([0])]}, out_shapes=[(1,)],
    expect_error="indices")

INDEX_PUT = "aten::index_put.out"
for dt in ALL_DTYPES:
    add(INDEX_PUT, {"self": T((4, 3), dt), "indices": [idx([3, 0])], "values": T((2, 3), dt)})
    add(INDEX_PUT, {"self": T((4, 3), dt), "indices": [idx([1, 1, 2, 1])],
                    "values": T((4, 3), dt), "accumulate": True}, name=f"{dn(dt)} accumulate")
PUT_VARIANTS = [
    ("broadcast value", [idx([0, 2])], T((), F32)),
    ("broadcast row", [idx([0, 2])], T((4, 1), F32)),
    ("second dim", [None, idx([3, -1])], T((3, 2, 5), F32)),
    ("non-adjacent", [idx([0, 2]), None, idx([1, 4])], T((2, 4), F32)),
    ("mask", [T((3, 4), B8)], T((), F32)),
    ("mask values", [T((3,), B8, values=[True, False, True])], T((2, 4, 5), F32)),
    ("empty index", [idx([])], T((1,), F32)),
]
for name, indices, values in PUT_VARIANTS:
    add(INDEX_PUT, {"self": T((3, 4, 5), F32), "indices": indices, "values": values}, name=name)
    add(INDEX_PUT, {"self": T((3, 4, 5), F32), "indices": indices, "values": values,
                    "accumulate": True}, name=name + " accumulate")
add(INDEX_PUT, {"self": T((3, 4, 5), F32, dim_order=(1, 2, 0)), "indices": [None, idx([1])],
                "values": T((3, 1, 5), F32, dim_order=(2, 0, 1))}, name="permuted")
add(INDEX_PUT, {"self": T((3, 4), F32), "indices": [idx([3])], "values": T((4,), F32)},
    expect_error="index 3 is out of bounds")
add(INDEX_PUT, {"self": T((3, 4), F32), "indices": [idx([1])], "values": T((4,), F64)},
    expect_error="values")
add(INDEX_PUT, {"self": T((3, 4), F32), "indices": [idx([1])], "values": T((3,), F32)},
    expect_error="values")
add(INDEX_PUT, {"self": T((3, 4), F32), "indices": [T((1,), I16, values=[1])],
                "values": T((4,), F32)}, expect_error="indices")

INDEX_SELECT = "aten::index_select.out"
for dt in ALL_DTYPES:
    add(INDEX_SELECT, {"self": T((4, 3), dt), "dim": 0, "index": idx([3, 0, 3])})
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": -1, "index": idx([2, 1], I32)}, name="int32")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 1, "index": idx(2)}, name="0-d index")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 1, "index": idx([])}, name="empty index")
add(INDEX_SELECT, {"self": T((), F32), "dim": 0, "index": idx([0])}, name="0-d self")
add(INDEX_SELECT, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "dim": 1,
                   "index": idx([2, 0])})
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 0, "index": idx([4])}, out_shapes=[(1, 3)],
    expect_error="index 4 is out of bounds for dimension 0 with size 4")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 0, "index": idx([-1])}, out_shapes=[(1, 3)],
    expect_error="'index'")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 0, "index": idx([[0]])},
    out_shapes=[(1, 3)], expect_error="index")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 0, "index": T((1,), F32, values=[0.0])},
    out_shapes=[(1, 3)], expect_error="index")
add(INDEX_SELECT, {"self": T((4, 3), F32), "dim": 2, "index": idx([0])}, out_shapes=[(1, 3)],
    expect_error="dim")

GATHER = "aten::gather.out"
for dt in ALL_DTYPES:
    add(GATHER, {"self": T((3, 4), dt), "dim": 1, "index": idx([[0, 3], [2, 2], [1, 0]])})
add(GATHER, {"self": T((3, 4), F32), "dim": 0, "index": idx([[2, 0, 1, 1]])}, name="dim 0")
add(GATHER, {"self": T((3, 4), F32), "dim": -1, "index": idx([[3], [0]])}, name="smaller index")
add(GATHER, {"self": T((3, 4, 2), F32, dim_order=(2, 0, 1)), "dim": 2,
             "index": T((3, 4, 2), I64, low=0, high=2, dim_order=(1, 2, 0))}, name="permuted")
add(GATHER, {"self": T((), F32), "dim": 0, "index": idx(0)}, name="0-d")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": T((3, 0), I64)}, name="empty index")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": idx([[4]])}, out_shapes=[(1, 1)],
    expect_error="index 4 is out of bounds for dimension 1 with size 4")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": idx([[-1]])}, out_shapes=[(1, 1)],
    expect_error="'index'")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": idx([[1]], I32)}, out_shapes=[(1, 1)],
    expect_error="index")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": idx([1])}, out_shapes=[(1,)],
    expect_error="index")
add(GATHER, {"self": T((3, 4), F32), "dim": 1, "index": idx([[1], [1], [1], [1]])},
    out_shapes=[(4, 1)], expect_error="index")

SCATTER_SRC = "aten::scatter.src_out"
SCATTER_VALUE = "aten::scatter.value_out"
SCATTER_ADD = "aten::scatter_add.out"
PERM_INDEX = idx([[2, 0, 3], [1, 3, 0]])  # Distinct per row: no ambiguous writes.
for dt in ALL_DTYPES:
    add(SCATTER_SRC, {"self": T((2, 4), dt), "dim": 1, "index": PERM_INDEX,
                      "src": T((2, 3), dt)})
    add(SCATTER_VALUE, {"self": T((2, 4), dt), "dim": 1, "index": PERM_INDEX,
                        "value": True if dt == B8 else 5})
    add(SCATTER_ADD, {"self": T((2, 4), dt), "dim": 1, "index": idx([[1, 1, 3], [0, 0, 0]]),
                      "src": T((2, 3), dt)})
add(SCATTER_SRC, {"self": T((3, 2), F32), "dim": 0, "index": idx([[2, 0], [0, 1]]),
                  "src": T((2, 2), F32)}, name="dim 0")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": -1, "index": idx([[3], [1]]),
                  "src": T((3, 5), F32)}, name="src larger")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": 1, "index": T((2, 0), I64),
                  "src": T((2, 3), F32)}, name="empty index")
add(SCATTER_SRC, {"self": T((), F32), "dim": 0, "index": idx(0), "src": T((), F32)}, name="0-d")
add(SCATTER_SRC, {"self": T((2, 4, 3), F32, dim_order=(2, 0, 1)), "dim": 1,
                  "index": idx([[[0, 1, 2]], [[3, 2, 1]]]),
                  "src": T((2, 1, 3), F32, dim_order=(1, 2, 0))}, name="permuted")
add(SCATTER_VALUE, {"self": T((2, 4), F32), "dim": 1, "index": PERM_INDEX, "value": -2.5},
    name="float value")
add(SCATTER_VALUE, {"self": T((2, 4), I32), "dim": 1, "index": PERM_INDEX, "value": 1.5},
    name="float value into int")
add(SCATTER_ADD, {"self": T((3, 2), F64), "dim": 0, "index": idx([[2, 2], [2, 0], [0, 2]]),
                  "src": T((3, 2), F64)}, name="dim 0 repeated")
add(SCATTER_ADD, {"self": T((2, 4), I8, low=100, high=127), "dim": 1,
                  "index": idx([[0, 0], [1, 1]]), "src": T((2, 2), I8, low=100, high=127)},
    name="int8 wraps")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": 1, "index": idx([[4]]), "src": T((2, 3), F32)},
    expect_error="index 4 is out of bounds for dimension 1 with size 4")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": 1, "index": idx([[-1]]),
                  "src": T((2, 3), F32)}, expect_error="'index'")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": 1, "index": idx([[1]]), "src": T((2, 3), F64)},
    expect_error="src")
add(SCATTER_SRC, {"self": T((2, 4), F32), "dim": 1, "index": idx([[1, 2, 3, 0]]),
                  "src": T((2, 3), F32)}, expect_error="index")
add(SCATTER_VALUE, {"self": T((2, 4), I8), "dim": 1, "index": idx([[1]]), "value": 300},
    expect_error="value")
add(SCATTER_VALUE, {"self": T((2, 4), F32), "dim": 1, "index": idx([[1]], I32), "value": 1},
    expect_error="index")
add(SCATTER_ADD, {"self": T((2, 4), F32), "dim": 1, "index": idx([[9]]), "src": T((2, 3), F32)},
    expect_error="index 9 is out of bounds")

SLICE_SCATTER = "aten::slice_scatter.out"
SELECT_SCATTER = "aten::select_scatter.out"
for dt in ALL_DTYPES:
    add(SLICE_SCATTER, {"self": T((4, 5), dt), "src": T((4, 2), dt), "dim": 1, "start": 1,
                        "end": 5, "step": 2})
    add(SELECT_SCATTER, {"self": T((4, 5), dt), "src": T((5,), dt), "dim": 0, "index": 2})
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((4, 5), F32)}, name="whole")
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((2, 5), F32), "start": -2}, name="negative")
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((0, 5), F32), "start": 3, "end": 1},
    name="empty slice")
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((4, 2), I64), "dim": 1, "end": 2},
    name="src converted")
add(SLICE_SCATTER, {"self": T((2, 6, 3, 2), F32, dim_order=(0, 2, 3, 1)),
                    "src": T((2, 2, 3, 2), F32), "dim": 1, "start": 1, "step": 3},
    name="channels-last")
add(SELECT_SCATTER, {"self": T((4, 5), F32), "src": T((4,), F32), "dim": -1, "index": -1},
    name="negative")
add(SELECT_SCATTER, {"self": T((4,), F32), "src": T((), F16), "dim": 0, "index": 3},
    name="0-d src converted")
add(SELECT_SCATTER, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)),
                     "src": T((2, 3, 5), F32), "dim": 2, "index": 1}, name="channels-last")
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((4, 3), F32), "dim": 1, "start": 1,
                    "end": 5, "step": 2}, expect_error="src")
add(SLICE_SCATTER, {"self": T((4, 5), F32), "src": T((4, 5), F32), "step": 0},
    expect_error="step")
add(SELECT_SCATTER, {"self": T((4, 5), F32), "src": T((4,), F32), "dim": 0, "index": 1},
    expect_error="src")
add(SELECT_SCATTER, {"self": T((4, 5), F32), "src": T((5,), F32), "dim": 0, "index": 4},
    expect_error="index 4 is out of bounds")

AS_STRIDED = "aten::as_strided_copy.out"
for dt in ALL_DTYPES:
    add(AS_STRIDED, {"self": T((4, 5), dt), "size": [3, 2], "stride": [5, 2], "storage_offset": 1})
for size, stride, offset in [([20], [1], None), ([2, 2], [0, 1], 3), ([4, 4], [1, 4], 0),
                             ([], [], 7), ([3, 0], [1, 1], 19), ([1], [100], 19)]:
    add(AS_STRIDED, {"self": T((4, 5), F32), "size": size, "stride": stride,
                     "storage_offset": offset})
add(AS_STRIDED, {"self": T((4, 5), F32, dim_order=(1, 0)), "size": [5, 4], "stride": [4, 1]},
    name="memory order of a permuted self")
add(AS_STRIDED, {"self": T((4, 5), F32), "size": [3, 2], "stride": [5, 2],
                 "storage_offset": 10}, expect_error="storage_offset")
add(AS_STRIDED, {"self": T((4, 5), F32), "size": [2], "stride": [-1], "storage_offset": 5},
    expect_error="stride")
add(AS_STRIDED, {"self": T((4, 5), F32), "size": [2, 2], "stride": [1]}, expect_error="stride")

NONZERO = "aten::nonzero.out"
for dt in ALL_DTYPES:
    add(NONZERO, {"self": T((3, 4), dt, low=0, high=2)})
add(NONZERO, {"self": T((5,), F32, values=[0.0, NAN, -0.0, INF, 1e-30])}, name="specials")
add(NONZERO, {"self": T((2, 3, 2), I32, low=0, high=2, dim_order=(2, 0, 1))}, name="permuted")
add(NONZERO, {"self": T((), F32, values=3.0)}, name="0-d nonzero")
add(NONZERO, {"self": T((), F32, values=0.0)}, name="0-d zero")
add(NONZERO, {"self": T((0, 3), F32)}, name="empty")
add(NONZERO, {"self": T((3, 4), F32)}, out_shapes=[(0, 2)], name="out resized")
add(NONZERO, {"self": T((3, 4), F32)}, out_dtype=I32, out_shapes=[(12, 2)], expect_error="out")

MASKED_SCATTER = "aten::masked_scatter.out"
for dt in ALL_DTYPES:
    add(MASKED_SCATTER, {"self": T((3, 4), dt), "mask": T((3, 4), B8), "source": T((12,), dt)})
add(MASKED_SCATTER, {"self": T((3,), F32), "mask": T((2, 1), B8, values=[[True], [False]]),
                     "source": T((2, 3), F32)}, name="broadcast mask")
add(MASKED_SCATTER, {"self": T((2, 3, 4), F32, dim_order=(2, 0, 1)), "mask": T((3, 4), B8),
                     "source": T((5, 6), F32, dim_order=(1, 0))}, name="layouts")
add(MASKED_SCATTER, {"self": T((), F32), "mask": T((), B8, values=True), "source": T((2,), F32)},
    name="0-d")
add(MASKED_SCATTER, {"self": T((0, 3), F32), "mask": T((3,), B8), "source": T((0,), F32)},
    name="empty")
add(MASKED_SCATTER, {"self": T((3,), F32), "mask": T((3,), B8, values=[True, True, True]),
                     "source": T((2,), F32)}, expect_error="source")
add(MASKED_SCATTER, {"self": T((3,), F32), "mask": T((3,), U8), "source": T((3,), F32)},
    expect_error="mask")
add(MASKED_SCATTER, {"self": T((3,), F32), "mask": T((3,), B8), "source": T((3,), I64)},
    expect_error="source")
add(MASKED_SCATTER, {"self": T((3,), F32), "mask": T((2,), B8), "source": T((3,), F32)},
    expect_error="mask")

# ------------------------------------------------------------------ sort / topk

SORT = "aten::sort.values"
SORT_STABLE = "aten::sort.values_stable"
TOPK = "aten::topk.values"
for i, dt in enumerate(ALL_DTYPES):
    if dt == B8:
        # Only two values, so ties: the stable overload fixes the order.
        add(SORT_STABLE, {"self": T((3, 8), B8), "stable": True})
        add(SORT_STABLE, {"self": T((3, 8), B8), "stable": True, "descending": True},
            name="bool descending")
        continue
    add(SORT, {"self": distinct((3, 6), dt, i)})
    add(SORT, {"self": distinct((3, 6), dt, i + 50), "dim": 0, "descending": True},
        name=f"{dn(dt)} dim 0 descending")
    add(SORT_STABLE, {"self": T((4, 9), dt, low=0, high=3), "stable": True},
        name=f"{dn(dt)} ties stable")
    add(SORT_STABLE, {"self": T((4, 9), dt, low=0, high=3), "stable": True, "descending": True},
        name=f"{dn(dt)} ties stable descending")
    add(TOPK, {"self": distinct((3, 7), dt, i + 100), "k": 3})
    add(TOPK, {"self": distinct((3, 7), dt, i + 150), "k": 2, "dim": 0, "largest": False},
        name=f"{dn(dt)} smallest dim 0")
for dt in (F32, F64, F16, BF16):
    v = [[3.0, NAN, -1.0, INF, 0.5, -INF, NAN]]
    add(SORT_STABLE, {"self": T((1, 7), dt, values=v), "stable": True}, name=f"{dn(dt)} nan")
    add(SORT_STABLE, {"self": T((1, 7), dt, values=v), "stable": True, "descending": True},
        name=f"{dn(dt)} nan descending")
    add(TOPK, {"self": T((1, 7), dt, values=[[3.0, NAN, -1.0, INF, 0.5, -INF, 2.0]]), "k": 3},
        name=f"{dn(dt)} nan is largest")
add(SORT, {"self": T((), F32)}, name="0-d")
add(SORT, {"self": T((0, 4), F32)}, name="empty")
add(SORT, {"self": distinct((2, 5, 3), F32, 7), "dim": 1}, name="middle dim")
add(SORT, {"self": T((2, 50), F64)}, name="long rows")
add(SORT_STABLE, {"self": T((4, 9), I32, low=0, high=3), "stable": None}, name="stable None",
    reference=lambda self, stable, dim, descending: torch.sort(self, dim=dim,
                                                               descending=descending,
                                                               stable=True))
add(SORT, {"self": T((2, 3, 4, 5), F32, dim_order=(0, 2, 3, 1)), "dim": 1}, name="channels-last")
add(SORT, {"self": T((2, 6), F32), "dim": 2}, out_shapes=[(2, 6), (2, 6)], expect_error="dim")
add(TOPK, {"self": distinct((3, 7), F32, 9), "k": 0}, name="k 0")
add(TOPK, {"self": distinct((3, 7), F32, 10), "k": 7}, name="k all")
add(TOPK, {"self": T((), F32), "k": 1}, name="0-d")
add(TOPK, {"self": T((0, 5), F32), "k": 2}, name="empty")
add(TOPK, {"self": distinct((2, 40), F32, 11), "k": 5}, name="long rows")
add(TOPK, {"self": distinct((2, 3, 4, 5), F32, 12), "k": 2, "dim": 1}, name="middle dim")
add(TOPK, {"self": T((3, 7), F32), "k": 8}, out_shapes=[(3, 8), (3, 8)], out_dtype=[F32, I64],
    expect_error="'k'")
add(TOPK, {"self": T((3, 7), F32), "k": -1}, out_shapes=[(3, 1), (3, 1)], out_dtype=[F32, I64],
    expect_error="'k'")
add(TOPK, {"self": T((3, 7), B8), "k": 1}, out_shapes=[(3, 1), (3, 1)], expect_error="self")
