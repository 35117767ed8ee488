// aten::atan2.out: the angle of the point (other, self), in (-pi, pi].
//
// ATen semantics: integer and bool inputs compute in float32; broadcasting;
// out takes any floating dtype the result casts to.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/elementwise_spec.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kAtan2Spec{DtypeSet::kFloat, Promotion::kIntToFloat,
                                     OutDtypeRule::kCanCast};

constexpr auto kAtan2 = [](auto a, auto b) { return std::atan2(a, b); };

}  // namespace

TL_BINARY_KERNEL(atan2_out, kAtan2Spec, kAtan2)

}  // namespace torchlight::portable
