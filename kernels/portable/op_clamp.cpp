// aten::clamp.out (Scalar bounds), clamp.Tensor_out (tensor bounds) and
// hardtanh.out: out = min(max(self, min), max).
//
// ATen semantics:
// - At least one bound must be given; bool is not supported.
// - clamp.out: a floating self keeps its dtype; otherwise the bounds take
//   part in type promotion (clamp(int32, 0.5) is float32, clamp(bool, 0, 1)
//   int64). Bounds are converted to that dtype with an overflow check, so
//   clamp(int8, -1000) is an error and uint8 takes -1 as 255. With both
//   bounds, a NaN bound makes every element NaN; with one, a NaN bound is
//   ignored. out must have exactly the result dtype.
// - clamp.Tensor_out: self and the bounds promote together and broadcast
//   together; NaN in self or in a bound gives NaN. With a single bound, bool
//   is supported (max is or, min is and). out takes any dtype the result
//   casts to.
// - In both, min > max gives max, and NaN in self stays NaN.
// - hardtanh.out: clamp.out whose bounds, for an integer self, are first
//   truncated to integers (so they never promote); uint8 rejects negative
//   bounds.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/scalar_math.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kClampTensorSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                           OutDtypeRule::kCanCast};
// With one bound, ATen's clamp_min / clamp_max kernels also take bool.
constexpr ElementwiseSpec kClampTensorOneBoundSpec{DtypeSet::kReal, Promotion::kDefault,
                                                   OutDtypeRule::kCanCast};

// clamp with Scalar bounds (null when None) into `out`, in dtype `result`.
// Failures go to `ctx`.
void clamp_scalar(KernelContext& ctx, const NamedTensor& self, const EValue* min,
                  const char* min_name, const EValue* max, const char* max_name,
                  ScalarType result, const NamedTensor& out) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype_rule(result, out, OutDtypeRule::kSame));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  if (min != nullptr) TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(*min, result, min_name));
  if (max != nullptr) TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(*max, result, max_name));

  TL_SWITCH_DTYPE_SET(DtypeSet::kRealNoBool, result, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const Compute lo = min != nullptr ? convert<Compute>(scalar_to<CTYPE>(*min)) : Compute(0);
    const Compute hi = max != nullptr ? convert<Compute>(scalar_to<CTYPE>(*max)) : Compute(0);
    Status status;
    if (min != nullptr && max != nullptr) {
      bool nan_bound = false;
      if constexpr (std::is_floating_point_v<Compute>) {
        nan_bound = std::isnan(lo) || std::isnan(hi);
      }
      status = apply_unary_elementwise<CTYPE>(self, out, [lo, hi, nan_bound](Compute x) {
        if (nan_bound) return std::numeric_limits<Compute>::quiet_NaN();
        return nan_min(nan_max(x, lo), hi);
      });
    } else if (min != nullptr) {
      // A NaN bound compares false and is ignored; a NaN x stays.
      status = apply_unary_elementwise<CTYPE>(self, out,
                                              [lo](Compute x) { return x < lo ? lo : x; });
    } else {
      status = apply_unary_elementwise<CTYPE>(self, out,
                                              [hi](Compute x) { return x > hi ? hi : x; });
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, status);
  });
}

bool has_tensor(const EValue& value) {
  return value.is_tensor() && value.to_tensor().defined();
}

}  // namespace

void clamp_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const EValue* min = args[1]->is_none() ? nullptr : args[1];
  const EValue* max = args[2]->is_none() ? nullptr : args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, min != nullptr || max != nullptr, Error::kInvalidArgument,
                  "at least one of arguments 'min' and 'max' must not be None");

  ResultType result_type;
  TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(self));
  ScalarType result = self.tensor.scalar_type();
  if (!is_floating_point(result)) {
    if (min != nullptr) result_type.add_scalar(*min);
    if (max != nullptr) result_type.add_scalar(*max);
    result = result_type.get();
  }
  clamp_scalar(ctx, self, min, "min", max, "max", result, out);
}

void hardtanh_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const ScalarType type = self.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, type != ScalarType::kBool, Error::kInvalidType,
                  "argument 'self' has dtype bool, which is not supported (supported: %s)",
                  kRealTypeNoBoolNames);
  if (!is_integral(type)) {
    clamp_scalar(ctx, self, args[1], "min_val", args[2], "max_val", type, out);
    return;
  }
  // Integer self: the bounds become int64 first (Double truncates; ATen's
  // Scalar::toLong, which rejects values beyond int64).
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(*args[1], ScalarType::kLong, "min_val"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(*args[2], ScalarType::kLong, "max_val"));
  EValue min(args[1]->scalar_as_int());
  EValue max(args[2]->scalar_as_int());
  TL_KERNEL_CHECK(ctx, type != ScalarType::kByte || (min.to_int() >= 0 && max.to_int() >= 0),
                  Error::kInvalidArgument,
                  "arguments 'min_val' = %lld and 'max_val' = %lld: a uint8 self needs bounds "
                  ">= 0",
                  static_cast<long long>(min.to_int()), static_cast<long long>(max.to_int()));
  clamp_scalar(ctx, self, &min, "min_val", &max, "max_val", type, out);
}

void clamp_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const bool has_min = has_tensor(*args[1]);
  const bool has_max = has_tensor(*args[2]);
  const NamedTensor min{has_min ? args[1]->to_tensor() : Tensor(), "min"};
  const NamedTensor max{has_max ? args[2]->to_tensor() : Tensor(), "max"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, has_min || has_max, Error::kInvalidArgument,
                  "at least one of arguments 'min' and 'max' must not be None");

  // The operands present, self first.
  NamedTensor inputs[3] = {self, has_min ? min : max, max};
  const size_t count = (has_min && has_max) ? 3 : 2;
  const Span<const NamedTensor> present(inputs, count);

  ResultType result_type;
  for (const NamedTensor& input : present) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(input));
  }
  const ScalarType result = result_type.get();
  const ElementwiseSpec& spec = count == 3 ? kClampTensorSpec : kClampTensorOneBoundSpec;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_compute_dtype(result, present, spec));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype_rule(result, out, spec.out_rule));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(present, out));

  TL_SWITCH_DTYPE_SET(DtypeSet::kReal, result, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    Status status;
    if (count == 2 && has_min) {
      status = apply_binary_elementwise<CTYPE>(
          self, min, out, [](Compute x, Compute lo) { return nan_max(x, lo); });
    } else if (count == 2) {
      status = apply_binary_elementwise<CTYPE>(
          self, max, out, [](Compute x, Compute hi) { return nan_min(x, hi); });
    } else if constexpr (!std::is_same_v<CTYPE, bool>) {  // Rejected above for two bounds.
      status = apply_ternary_elementwise<CTYPE>(
          self, min, max, out, [](Compute x, Compute lo, Compute hi) {
            if constexpr (std::is_floating_point_v<Compute>) {
              if (std::isnan(lo)) return lo;
              if (std::isnan(hi)) return hi;
            }
            return nan_min(nan_max(x, lo), hi);
          });
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, status);
  });
}

}  // namespace torchlight::portable
