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

TL_BINARY_KERNEL(eq_tensor_out, kComparisonSpec, kEq)
TL_BINARY_SCALAR_KERNEL(eq_scalar_out, kComparisonSpec, kEq)
TL_BINARY_KERNEL(ne_tensor_out, kComparisonSpec, kNe)
TL_BINARY_SCALAR_KERNEL(ne_scalar_out, kComparisonSpec, kNe)
TL_BINARY_KERNEL(lt_tensor_out, kComparisonSpec, kLt)
TL_BINARY_SCALAR_KERNEL(lt_scalar_out, kComparisonSpec, kLt)
TL_BINARY_KERNEL(le_tensor_out, kComparisonSpec, kLe)
TL_BINARY_SCALAR_KERNEL(le_scalar_out, kComparisonSpec, kLe)
TL_BINARY_KERNEL(gt_tensor_out, kComparisonSpec, kGt)
TL_BINARY_SCALAR_KERNEL(gt_scalar_out, kComparisonSpec, kGt)
TL_BINARY_KERNEL(ge_tensor_out, kComparisonSpec, kGe)
TL_BINARY_SCALAR_KERNEL(ge_scalar_out, kComparisonSpec, kGe)

}  // namespace torchlight::portable
