// aten::fmod.Tensor_out and fmod.Scalar_out: C's fmod, the remainder with
// the sign of `self`: self - other * trunc(self / other).
//
// ATen semantics: type promotion; bool is not supported; an integer zero
// divisor is an error (ZeroDivisionError in ATen); MIN fmod -1 is 0; floats
// use std::fmod (x fmod 0 is NaN). out takes any dtype the result casts to.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/scalar_math.h"

namespace torchlight::portable {

namespace {

// Fields: dtypes, promotion, out rule, nonzero integer divisor.
constexpr ElementwiseSpec kFmodSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                    OutDtypeRule::kCanCast, true};
constexpr auto kFmod = [](auto a, auto b) { return truncated_remainder(a, b); };

}  // namespace

TL_BINARY_KERNEL(fmod_tensor_out, kFmodSpec, kFmod)
TL_BINARY_SCALAR_KERNEL(fmod_scalar_out, kFmodSpec, kFmod)

}  // namespace torchlight::portable
