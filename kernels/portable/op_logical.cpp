// aten::logical_and.out, logical_or.out, logical_xor.out, logical_not.out.
//
// ATen semantics: an element is true when it is nonzero (NaN is true),
// tested after conversion to the inputs' common dtype; inputs of any real
// dtypes broadcast; the bool result may be written into an out of any real
// dtype, as 0 or 1.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kLogicalNotSpec{DtypeSet::kReal, Promotion::kDefault,
                                          OutDtypeRule::kAny};

template <typename T>
bool truth(T value) {
  return value != T(0);
}

}  // namespace

constexpr auto kLogicalAndOp = [](auto a, auto b) { return truth(a) && truth(b); };
TL_BINARY_KERNEL(logical_and_out, kComparisonSpec, kLogicalAndOp)

constexpr auto kLogicalOrOp = [](auto a, auto b) { return truth(a) || truth(b); };
TL_BINARY_KERNEL(logical_or_out, kComparisonSpec, kLogicalOrOp)

constexpr auto kLogicalXorOp = [](auto a, auto b) { return truth(a) != truth(b); };
TL_BINARY_KERNEL(logical_xor_out, kComparisonSpec, kLogicalXorOp)

constexpr auto kLogicalNotOp = [](auto a) { return !truth(a); };
TL_UNARY_KERNEL(logical_not_out, kLogicalNotSpec, kLogicalNotOp)

}  // namespace torchlight::portable
