"""Prints the torch results embedded in op_add_test.cpp / op_mul_test.cpp.

Run at authoring time inside the toolchain:
  tools/toolchain/run_in_root.sh /work/main python3 kernels/portable/test/torch_reference.py
The tests do not run Python; they hold the printed values.
"""
import torch


def bits(t):
    return ", ".join(f"0x{int(x) & 0xffff:04x}" for x in t.view(torch.int16).flatten().tolist())


def vals(t):
    return ", ".join(repr(float(x)) if t.is_floating_point() else str(int(x)) for x in t.flatten().tolist())


def case(name, result):
    body = bits(result) if result.dtype in (torch.float16, torch.bfloat16) else vals(result)
    print(f"{name} [{result.dtype}, {list(result.shape)}]: {{{body}}}")


h, bf = torch.float16, torch.bfloat16
a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
b = torch.tensor([0.5, -1.25, 3.0], dtype=torch.float32)
case("add_int32_float32_alpha2", torch.add(a, b, alpha=2))
case("add_half_rounding", torch.add(torch.tensor([2048, 2050, 0.1, 1000.5], dtype=h),
                                    torch.tensor([1, 1, 0.2, 0.25], dtype=h)))
case("add_bf16_rounding", torch.add(torch.tensor([256, 258, 1.1, 3], dtype=bf),
                                    torch.tensor([1, 1, 0.3, 0.0078125], dtype=bf)))
case("add_half_alpha", torch.add(torch.tensor([1, 2, 3, 0.5], dtype=h),
                                 torch.tensor([3, 7, 11, 0.3], dtype=h), alpha=0.1))
out = torch.empty(1, dtype=torch.float64)
case("add_f32_zero_dim_f64", torch.add(torch.tensor([16777216.0]), torch.tensor(1.0, dtype=torch.float64), out=out))
case("add_int32_zero_dim_f64", torch.add(torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor(2.5, dtype=torch.float64)))
case("mul_half", torch.mul(torch.tensor([0.1, 3.3, 100, -2.5], dtype=h), torch.tensor([3, 0.7, 700, 0.1], dtype=h)))
case("mul_bf16", torch.mul(torch.tensor([0.1, 3.3, 100, -2.5], dtype=bf), torch.tensor([3, 0.7, 700, 0.1], dtype=bf)))
case("add_uint8_int8", torch.add(torch.tensor([200, 255, 0], dtype=torch.uint8), torch.tensor([-100, 127, -128], dtype=torch.int8)))
bl1 = torch.tensor([True, True, False, False])
bl2 = torch.tensor([True, False, True, False])
case("add_bool", torch.add(bl1, bl2))
case("add_bool_alpha0", torch.add(bl1, bl2, alpha=0))
case("mul_bool", torch.mul(bl1, bl2))
case("add_int32_wrap", torch.add(torch.tensor([2147483647, -2147483648], dtype=torch.int32), torch.tensor([1, -1], dtype=torch.int32)))
case("mul_int64_wrap", torch.mul(torch.tensor([2**62, 3], dtype=torch.int64), torch.tensor([4, 2**62], dtype=torch.int64)))
case("mul_int8_wrap", torch.mul(torch.tensor([100, -128], dtype=torch.int8), torch.tensor([3, -1], dtype=torch.int8)))
case("add_scalar_half", torch.ops.aten.add.Scalar(torch.tensor([1, 2.5, 1000], dtype=h), 0.1))
case("mul_scalar_half", torch.ops.aten.mul.Scalar(torch.tensor([1, 2.5, 1000], dtype=h), 0.1))
case("add_scalar_int8_wrap", torch.ops.aten.add.Scalar(torch.tensor([1, 2], dtype=torch.int8), 300))
case("add_scalar_bool_int", torch.ops.aten.add.Scalar(torch.tensor([True, False]), 2))
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
case("add_broadcast_2x1_1x3", torch.add(torch.tensor([[1.0], [2.0]]), torch.tensor([[10.0, 20.0, 30.0]]), alpha=-1.5))
case("mul_permuted", torch.mul(x.t().contiguous().t(), torch.tensor([2.0, 3.0, 4.0])))
case("add_int32_into_int64_out", torch.add(torch.tensor([2147483647, 1], dtype=torch.int32),
                                           torch.tensor([1, 1], dtype=torch.int32),
                                           out=torch.empty(2, dtype=torch.int64)))
case("add_bool_int32_alpha", torch.add(torch.tensor([True, False, True]),
                                       torch.tensor([5, 6, -7], dtype=torch.int32), alpha=-2))
case("mul_int16_float64", torch.mul(torch.tensor([-3, 4, 300], dtype=torch.int16),
                                    torch.tensor([0.5, 0.25, 2], dtype=torch.float64)))
case("add_half_float32", torch.add(torch.tensor([0.1, 2048], dtype=h), torch.tensor([1e-4, 0.5])))
