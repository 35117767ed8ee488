// The floating-point unary math operators, each `op.out(Tensor self, *,
// Tensor(a!) out)`: sqrt, rsqrt, reciprocal, exp, expm1, log, log1p, log2,
// log10, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh,
// atanh, erf, sigmoid.
//
// ATen semantics: integer and bool inputs compute in float32 (sqrt of an
// int64 tensor is float32); float16/bfloat16 compute in float and round
// once; out takes any floating dtype the result casts to (kUnaryFloatSpec).
// Results outside the domain are IEEE's: NaN for sqrt(-1), -inf for log(0).
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

constexpr auto kSqrtOp = [](auto x) { return std::sqrt(x); };
TL_UNARY_KERNEL(sqrt_out, kUnaryFloatSpec, kSqrtOp)
constexpr auto kRsqrtOp = [](auto x) { return decltype(x)(1) / std::sqrt(x); };
TL_UNARY_KERNEL(rsqrt_out, kUnaryFloatSpec, kRsqrtOp)
constexpr auto kReciprocalOp = [](auto x) { return decltype(x)(1) / x; };
TL_UNARY_KERNEL(reciprocal_out, kUnaryFloatSpec, kReciprocalOp)
constexpr auto kExpOp = [](auto x) { return std::exp(x); };
TL_UNARY_KERNEL(exp_out, kUnaryFloatSpec, kExpOp)
constexpr auto kExpm1Op = [](auto x) { return std::expm1(x); };
TL_UNARY_KERNEL(expm1_out, kUnaryFloatSpec, kExpm1Op)
constexpr auto kLogOp = [](auto x) { return std::log(x); };
TL_UNARY_KERNEL(log_out, kUnaryFloatSpec, kLogOp)
constexpr auto kLog1pOp = [](auto x) { return std::log1p(x); };
TL_UNARY_KERNEL(log1p_out, kUnaryFloatSpec, kLog1pOp)
constexpr auto kLog2Op = [](auto x) { return std::log2(x); };
TL_UNARY_KERNEL(log2_out, kUnaryFloatSpec, kLog2Op)
constexpr auto kLog10Op = [](auto x) { return std::log10(x); };
TL_UNARY_KERNEL(log10_out, kUnaryFloatSpec, kLog10Op)
constexpr auto kSinOp = [](auto x) { return std::sin(x); };
TL_UNARY_KERNEL(sin_out, kUnaryFloatSpec, kSinOp)
constexpr auto kCosOp = [](auto x) { return std::cos(x); };
TL_UNARY_KERNEL(cos_out, kUnaryFloatSpec, kCosOp)
constexpr auto kTanOp = [](auto x) { return std::tan(x); };
TL_UNARY_KERNEL(tan_out, kUnaryFloatSpec, kTanOp)
constexpr auto kAsinOp = [](auto x) { return std::asin(x); };
TL_UNARY_KERNEL(asin_out, kUnaryFloatSpec, kAsinOp)
constexpr auto kAcosOp = [](auto x) { return std::acos(x); };
TL_UNARY_KERNEL(acos_out, kUnaryFloatSpec, kAcosOp)
constexpr auto kAtanOp = [](auto x) { return std::atan(x); };
TL_UNARY_KERNEL(atan_out, kUnaryFloatSpec, kAtanOp)
constexpr auto kSinhOp = [](auto x) { return std::sinh(x); };
TL_UNARY_KERNEL(sinh_out, kUnaryFloatSpec, kSinhOp)
constexpr auto kCoshOp = [](auto x) { return std::cosh(x); };
TL_UNARY_KERNEL(cosh_out, kUnaryFloatSpec, kCoshOp)
constexpr auto kTanhOp = [](auto x) { return std::tanh(x); };
TL_UNARY_KERNEL(tanh_out, kUnaryFloatSpec, kTanhOp)
constexpr auto kAsinhOp = [](auto x) { return std::asinh(x); };
TL_UNARY_KERNEL(asinh_out, kUnaryFloatSpec, kAsinhOp)
constexpr auto kAcoshOp = [](auto x) { return std::acosh(x); };
TL_UNARY_KERNEL(acosh_out, kUnaryFloatSpec, kAcoshOp)
constexpr auto kAtanhOp = [](auto x) { return std::atanh(x); };
TL_UNARY_KERNEL(atanh_out, kUnaryFloatSpec, kAtanhOp)
constexpr auto kErfOp = [](auto x) { return std::erf(x); };
TL_UNARY_KERNEL(erf_out, kUnaryFloatSpec, kErfOp)
constexpr auto kSigmoidOp = [](auto x) {
  using T = decltype(x);
  return T(1) / (T(1) + std::exp(-x));
};
TL_UNARY_KERNEL(sigmoid_out, kUnaryFloatSpec, kSigmoidOp)

}  // namespace torchlight::portable
