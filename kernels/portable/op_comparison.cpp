// aten::{eq,ne,lt,le,gt,ge}.Tensor_out and .Scalar_out: elementwise
// comparisons.
//
// ATen semantics: both operands are converted to their common dtype (type
// promotion, a Scalar taking part as a Python number: int8 == 300 compares
// with 300 wrapped to int8, float16 == 0.1 with 0.1 rounded to float16) and
// compared there; NaN compares unequal to everything. The bool result may be
// written into an out of any real dtype, as 0 or 1.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"

namespace torchlight::portable {

namespace {

constexpr auto kEq = [](auto a, auto b) { return a == b; };
constexpr auto kNe = [](auto a, auto b) { return a != b; };
constexpr auto kLt = [](auto a, auto b) { return a < b; };
constexpr auto kLe = [](auto a, auto b) { return a <= b; };
constexpr auto kGt = [](auto a, auto b) { return a > b; };
constexpr auto kGe = [](auto a, auto b) { return a >= b; };

}  // namespace

void eq_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kEq);
}
void eq_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kEq);
}
void ne_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kNe);
}
void ne_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kNe);
}
void lt_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kLt);
}
void lt_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kLt);
}
void le_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kLe);
}
void le_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kLe);
}
void gt_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kGt);
}
void gt_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kGt);
}
void ge_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, kGe);
}
void ge_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  binary_scalar_kernel<kComparisonSpec>(ctx, args, kGe);
}

}  // namespace torchlight::portable
