// Unary operators on every real dtype, each `op.out(Tensor self, *,
// Tensor(a!) out)`: neg, abs, sign, isnan, isinf.
//
// ATen semantics: neg and abs keep self's dtype, reject bool and wrap for
// integers (neg(int8 -128) and abs(int8 -128) are -128; neg(uint8 5) is
// 251); sign keeps the dtype, supports bool (identity) and gives 0 for NaN;
// isnan and isinf give bool (always false for integers). out must have
// exactly the result dtype, as ATen requires for these ops.
#include <cmath>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/scalar_math.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kNumericSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                       OutDtypeRule::kSame};
constexpr ElementwiseSpec kSignSpec{DtypeSet::kReal, Promotion::kDefault, OutDtypeRule::kSame};
constexpr ElementwiseSpec kClassifySpec{DtypeSet::kReal, Promotion::kDefault,
                                        OutDtypeRule::kBool};

}  // namespace

constexpr auto kNegOp = [](auto x) { return negate(x); };
TL_UNARY_KERNEL(neg_out, kNumericSpec, kNegOp)

constexpr auto kAbsOp = [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else if constexpr (std::is_signed_v<T>) {
    return x < 0 ? negate(x) : x;
  } else {
    return x;
  }
};
TL_UNARY_KERNEL(abs_out, kNumericSpec, kAbsOp)

constexpr auto kSignOp = [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(x != 0 ? 1 : 0);
  } else {
    // 1, 0 or -1; NaN compares false both ways, so gives 0.
    return static_cast<T>(static_cast<int>(T(0) < x) - static_cast<int>(x < T(0)));
  }
};
TL_UNARY_KERNEL(sign_out, kSignSpec, kSignOp)

constexpr auto kIsnanOp = [](auto x) {
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    return std::isnan(x);
  } else {
    return false;
  }
};
TL_UNARY_KERNEL(isnan_out, kClassifySpec, kIsnanOp)

constexpr auto kIsinfOp = [](auto x) {
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    return std::isinf(x);
  } else {
    return false;
  }
};
TL_UNARY_KERNEL(isinf_out, kClassifySpec, kIsinfOp)

}  // namespace torchlight::portable
