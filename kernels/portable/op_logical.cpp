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

void logical_and_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, [](auto a, auto b) { return truth(a) && truth(b); });
}

void logical_or_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, [](auto a, auto b) { return truth(a) || truth(b); });
}

void logical_xor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kComparisonSpec>(ctx, args, [](auto a, auto b) { return truth(a) != truth(b); });
}

void logical_not_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kLogicalNotSpec>(ctx, args, [](auto a) { return !truth(a); });
}

}  // namespace torchlight::portable
