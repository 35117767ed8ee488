// aten::bitwise_{and,or,xor}.Tensor_out and .Scalar_out, bitwise_not.out.
//
// ATen semantics: integers and bool only (a float operand or a float Scalar
// is an error); type promotion, a Scalar converted to the common dtype
// without a range check (int8 & 300 uses 300 wrapped to 44); bool operands
// give logical and/or/xor/not. The binary ops accept any out dtype the
// result casts to; bitwise_not needs exactly self's dtype.
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kBitwiseSpec{DtypeSet::kIntOrBool, Promotion::kDefault,
                                       OutDtypeRule::kCanCast};
constexpr ElementwiseSpec kBitwiseNotSpec{DtypeSet::kIntOrBool, Promotion::kDefault,
                                          OutDtypeRule::kSame};

// The integer operations promote to int; the kernels cast back to the type.
constexpr auto kAnd = [](auto a, auto b) { return static_cast<decltype(a)>(a & b); };
constexpr auto kOr = [](auto a, auto b) { return static_cast<decltype(a)>(a | b); };
constexpr auto kXor = [](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); };

}  // namespace

TL_BINARY_KERNEL(bitwise_and_tensor_out, kBitwiseSpec, kAnd)
TL_BINARY_SCALAR_KERNEL(bitwise_and_scalar_out, kBitwiseSpec, kAnd)
TL_BINARY_KERNEL(bitwise_or_tensor_out, kBitwiseSpec, kOr)
TL_BINARY_SCALAR_KERNEL(bitwise_or_scalar_out, kBitwiseSpec, kOr)
TL_BINARY_KERNEL(bitwise_xor_tensor_out, kBitwiseSpec, kXor)
TL_BINARY_SCALAR_KERNEL(bitwise_xor_scalar_out, kBitwiseSpec, kXor)

constexpr auto kBitwiseNotOp = [](auto a) {
  using T = decltype(a);
  if constexpr (std::is_same_v<T, bool>) {
    return !a;
  } else {
    return static_cast<T>(~a);
  }
};
TL_UNARY_KERNEL(bitwise_not_out, kBitwiseNotSpec, kBitwiseNotOp)

}  // namespace torchlight::portable
