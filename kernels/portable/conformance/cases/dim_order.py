"""dim_order_ops::_to_dim_order_copy.out: every dtype into every dtype, into a
contiguous and a channels-last out, from a contiguous and a channels-last
self, against torch's _to_copy with the memory format the dim order stands
for. (_empty_dim_order.out writes no values; kernels/portable/
op_dim_order_ops_test.cpp covers it.)

The dim_order_ops operators are not part of torch; torchlight.dim_order_ops
defines them under upstream's schemas."""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "python"))
from torchlight import dim_order_ops  # noqa: E402

from conformance.spec import ALL_DTYPES, Case, T  # noqa: E402

CASES = []
OP = "dim_order_ops::_to_dim_order_copy.out"
CONTIGUOUS = [0, 1, 2, 3]
CHANNELS_LAST = list(dim_order_ops.CHANNELS_LAST_4D)


def dn(dtype):
    return str(dtype).replace("torch.", "")


def reference(dtype):
    """torch's _to_copy to `dtype`, in the layout the dim_order argument names."""
    def run(self, non_blocking, dim_order):
        return torch.ops.aten._to_copy.default(
            self, dtype=dtype, memory_format=dim_order_ops.memory_format_for(dim_order))
    return run


def add(args, dtype, **kw):
    CASES.append(Case(OP, args, out_dtype=dtype, reference=reference(dtype), **kw))


for src in ALL_DTYPES:
    for dst in ALL_DTYPES:
        # Negative floats into uint8 are undefined in C++: keep them non-negative.
        low = 0 if (src.is_floating_point and dst == torch.uint8) else None
        add({"self": T((2, 3, 2, 2), src, low=low), "dim_order": CONTIGUOUS}, dst,
            name=f"{dn(src)} to {dn(dst)} contiguous")
        add({"self": T((2, 3, 2, 2), src, low=low), "dim_order": CHANNELS_LAST}, dst,
            name=f"{dn(src)} to {dn(dst)} channels-last")
for dst in (torch.float32, torch.float16, torch.int64):
    add({"self": T((2, 3, 4, 5), torch.float32, dim_order=(0, 2, 3, 1)), "dim_order": CONTIGUOUS},
        dst, name=f"channels-last self to contiguous {dn(dst)}")
    add({"self": T((2, 3, 4, 5), torch.float32, dim_order=(0, 2, 3, 1)), "dim_order": None},
        dst, name=f"channels-last self preserved as {dn(dst)}")
add({"self": T((3, 5), torch.float64), "dim_order": None}, torch.float32, name="2-D, no dim_order")
add({"self": T((), torch.int32), "dim_order": []}, torch.float32, name="0-d")
add({"self": T((0, 3, 2, 2), torch.float32), "dim_order": CHANNELS_LAST}, torch.float16,
    name="empty channels-last")
# The argument must name out's own layout and be a permutation of its rank.
CASES.append(Case(OP, {"self": T((2, 3, 2, 2), torch.float32), "dim_order": [0, 1, 2]},
                  out_dtype=torch.float32, out_shapes=[(2, 3, 2, 2)], expect_error="dim_order"))
CASES.append(Case(OP, {"self": T((2, 3, 2, 2), torch.float32), "dim_order": [0, 1, 1, 3]},
                  out_dtype=torch.float32, out_shapes=[(2, 3, 2, 2)],
                  expect_error="not a permutation"))
CASES.append(Case(OP, {"self": T((2, 3, 2, 2), torch.float32), "dim_order": CHANNELS_LAST},
                  out_dtype=torch.float32, expect_error="disagree"))
