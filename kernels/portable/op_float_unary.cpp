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

namespace {

template <typename Op>
void float_unary(KernelContext& ctx, Span<EValue*> args, const Op& op) {
  unary_kernel<kUnaryFloatSpec>(ctx, args, op);
}

}  // namespace

void sqrt_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::sqrt(x); });
}
void rsqrt_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
}
void reciprocal_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return decltype(x)(1) / x; });
}
void exp_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::exp(x); });
}
void expm1_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::expm1(x); });
}
void log_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::log(x); });
}
void log1p_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::log1p(x); });
}
void log2_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::log2(x); });
}
void log10_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::log10(x); });
}
void sin_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::sin(x); });
}
void cos_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::cos(x); });
}
void tan_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::tan(x); });
}
void asin_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::asin(x); });
}
void acos_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::acos(x); });
}
void atan_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::atan(x); });
}
void sinh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::sinh(x); });
}
void cosh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::cosh(x); });
}
void tanh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::tanh(x); });
}
void asinh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::asinh(x); });
}
void acosh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::acosh(x); });
}
void atanh_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::atanh(x); });
}
void erf_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) { return std::erf(x); });
}
void sigmoid_out(KernelContext& ctx, Span<EValue*> args) {
  float_unary(ctx, args, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
}

}  // namespace torchlight::portable
