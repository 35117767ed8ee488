// The rounding operators: floor, ceil, trunc, round (each `op.out(Tensor
// self, *, Tensor(a!) out)`) and round.decimals_out(Tensor self, *, int
// decimals, Tensor(a!) out).
//
// ATen semantics: the dtype is kept and out must have exactly it; bool is
// not supported; integers are returned unchanged (round with decimals
// supports floats only). round rounds half to even (std::nearbyint in the
// default rounding mode, as ATen). round with decimals d computes
// nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0,
// with 10^|d| in the compute type, exactly as ATen (so it inherits the
// binary representation's surprises: round(2.675, 2) is 2.68 in float32).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kRoundingSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                        OutDtypeRule::kSame};
constexpr ElementwiseSpec kRoundDecimalsSpec{DtypeSet::kFloat, Promotion::kDefault,
                                             OutDtypeRule::kSame};

// Applies `fn` to floats; integers pass through unchanged.
template <typename Fn>
constexpr auto floats_only(Fn fn) {
  return [fn](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return fn(x);
    } else {
      return x;
    }
  };
}

}  // namespace

constexpr auto kFloorOp = floats_only([](auto x) { return std::floor(x); });
TL_UNARY_KERNEL(floor_out, kRoundingSpec, kFloorOp)

constexpr auto kCeilOp = floats_only([](auto x) { return std::ceil(x); });
TL_UNARY_KERNEL(ceil_out, kRoundingSpec, kCeilOp)

constexpr auto kTruncOp = floats_only([](auto x) { return std::trunc(x); });
TL_UNARY_KERNEL(trunc_out, kRoundingSpec, kTruncOp)

constexpr auto kRoundOp = floats_only([](auto x) { return std::nearbyint(x); });
TL_UNARY_KERNEL(round_out, kRoundingSpec, kRoundOp)

namespace {

// round(x, decimals) for round.decimals_out(self, decimals, out).
constexpr auto kRoundDecimalsOp = [](auto tag, Span<EValue*> args) {
  using Compute = opmath_t<typename decltype(tag)::type>;
  const int64_t decimals = args[1]->to_int();
  const bool negative = decimals < 0;
  // |decimals| > 400 overflows double to inf either way; clamp so the
  // magnitude is well defined for INT64_MIN.
  const double magnitude = negative ? (decimals < -400 ? 400.0 : -static_cast<double>(decimals))
                                    : (decimals > 400 ? 400.0 : static_cast<double>(decimals));
  const Compute scale = static_cast<Compute>(std::pow(10.0, magnitude));
  return [negative, scale](Compute x) {
    return negative ? std::nearbyint(x / scale) * scale : std::nearbyint(x * scale) / scale;
  };
};

}  // namespace

void round_decimals_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare_unary(self, out, kRoundDecimalsSpec, &compute));
  TL_SWITCH_DTYPE_SET(DtypeSet::kFloat, compute, ctx, "self", CTYPE, [&] {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_unary_elementwise<CTYPE>(self, out, kRoundDecimalsOp(TypeTag<CTYPE>{}, args)));
  });
}

Status round_decimals_out_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  return dense_path::prepare_unary_params_op<kRoundDecimalsSpec, 2, kRoundDecimalsOp,
                                             &round_decimals_out>(ctx, args, call);
}

}  // namespace torchlight::portable
