// aten::remainder.Tensor_out and remainder.Scalar_out: Python's %, the
// remainder with the sign of `other`: self - other * floor(self / other).
//
// ATen semantics: type promotion (a float Scalar makes an integer tensor's
// result float32); bool is not supported; an integer zero divisor is an
// error (ZeroDivisionError in ATen); MIN % -1 is 0; floats follow fmod with
// a sign fix, so x % 0 is NaN and 1 % -inf is -inf. out takes any dtype the
// result casts to.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/scalar_math.h"

namespace torchlight::portable {

namespace {

// Fields: dtypes, promotion, out rule, nonzero integer divisor.
constexpr ElementwiseSpec kRemainderSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                         OutDtypeRule::kCanCast, true};
constexpr auto kRemainder = [](auto a, auto b) { return python_remainder(a, b); };

}  // namespace

TL_BINARY_KERNEL(remainder_tensor_out, kRemainderSpec, kRemainder)
TL_BINARY_SCALAR_KERNEL(remainder_scalar_out, kRemainderSpec, kRemainder)

}  // namespace torchlight::portable
