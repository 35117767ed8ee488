// aten::maximum.out and aten::minimum.out: the elementwise larger / smaller
// of self and other.
//
// ATen semantics: type promotion and broadcasting; NaN in either input gives
// NaN; bool is supported (maximum is logical or, minimum logical and). out
// takes any dtype the result casts to.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/scalar_math.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kMinMaxSpec{DtypeSet::kReal, Promotion::kDefault,
                                      OutDtypeRule::kCanCast};

}  // namespace

constexpr auto kMaximumOp = [](auto a, auto b) { return nan_max(a, b); };
TL_BINARY_KERNEL(maximum_out, kMinMaxSpec, kMaximumOp)

constexpr auto kMinimumOp = [](auto a, auto b) { return nan_min(a, b); };
TL_BINARY_KERNEL(minimum_out, kMinMaxSpec, kMinimumOp)

}  // namespace torchlight::portable
