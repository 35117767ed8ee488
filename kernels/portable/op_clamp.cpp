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
//
// clamp.out and hardtanh.out have a prepare step: it rejects at load what
// the dtypes and the bounds' presence already decide, and for a dense
// float32/float64 self and out installs clamp_dense_eval, which reads the
// bounds on every run (an earlier instruction may compute them) and hands
// any bound it cannot take as is to the reference eval.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
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

// The three element functions, shared by the reference and the dense eval.
template <typename Compute>
Compute clamp_both(Compute x, Compute lo, Compute hi, bool nan_bound) {
  if (nan_bound) return std::numeric_limits<Compute>::quiet_NaN();
  return nan_min(nan_max(x, lo), hi);
}
// A NaN bound compares false and is ignored; a NaN x stays.
template <typename Compute>
Compute clamp_below(Compute x, Compute lo) {
  return x < lo ? lo : x;
}
template <typename Compute>
Compute clamp_above(Compute x, Compute hi) {
  return x > hi ? hi : x;
}

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
        return clamp_both(x, lo, hi, nan_bound);
      });
    } else if (min != nullptr) {
      status = apply_unary_elementwise<CTYPE>(self, out,
                                              [lo](Compute x) { return clamp_below(x, lo); });
    } else {
      status = apply_unary_elementwise<CTYPE>(self, out,
                                              [hi](Compute x) { return clamp_above(x, hi); });
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, status);
  });
}

bool has_tensor(const EValue& value) {
  return value.is_tensor() && value.to_tensor().defined();
}

// A bound as the reference converts it for a floating T, when it is an Int
// or a Double that fits T (check_scalar_fits); false sends the call to the
// reference, which decides (a Bool, an overflow error).
template <typename T>
bool bound_as(const EValue& bound, T* value) {
  if (bound.is_double()) {
    const double v = bound.to_double();
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max())) {
      return false;
    }
  } else if (!bound.is_int()) {
    return false;
  }
  *value = convert<T>(scalar_to<T>(bound));
  return true;
}

// clamp.out / hardtanh.out (self, min, max, out) on a dense floating self
// and out of dtype T, chosen at load; `reference` is the op's own eval.
template <typename T, KernelFunction reference>
void clamp_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  const bool has_min = !args[1]->is_none();
  const bool has_max = !args[2]->is_none();
  T lo = 0;
  T hi = 0;
  if ((has_min && !bound_as(*args[1], &lo)) || (has_max && !bound_as(*args[2], &hi)) ||
      !(has_min || has_max) || !dense_path::fit_out(self, out)) {
    return reference(ctx, args);
  }
  const int64_t n = self.numel();
  const T* a = self.const_data_ptr<T>();
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || z == nullptr)) return reference(ctx, args);
  set_return(args, 4, *args[3]);
  if (has_min && has_max) {
    const bool nan_bound = std::isnan(lo) || std::isnan(hi);
    for (int64_t i = 0; i < n; ++i) z[i] = clamp_both(a[i], lo, hi, nan_bound);
  } else if (has_min) {
    for (int64_t i = 0; i < n; ++i) z[i] = clamp_below(a[i], lo);
  } else {
    for (int64_t i = 0; i < n; ++i) z[i] = clamp_above(a[i], hi);
  }
}

// What clamp.out and hardtanh.out check at load for a floating self (whose
// dtype is the result's; the bounds never promote it): out must have it.
// Installs the dense eval for float32/float64 in the default dim order.
template <KernelFunction reference>
Status prepare_floating_clamp(Span<EValue*> args, PreparedCall* call) {
  const Tensor self = args[0]->to_tensor();
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const ScalarType type = self.scalar_type();
  if (!is_floating_point(type)) return Error::kOk;
  TL_RETURN_IF_ERROR(check_out_dtype_rule(type, out, OutDtypeRule::kSame));
  if (!dense_path::is_dense(self) || !dense_path::is_dense(out.tensor)) return Error::kOk;
  if (type == ScalarType::kFloat) call->eval = &clamp_dense_eval<float, reference>;
  if (type == ScalarType::kDouble) call->eval = &clamp_dense_eval<double, reference>;
  return Error::kOk;
}

}  // namespace

Status clamp_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  // Whether a bound is None does not change between runs.
  TL_CHECK_OR_RETURN(!args[1]->is_none() || !args[2]->is_none(), Error::kInvalidArgument,
                     "at least one of arguments 'min' and 'max' must not be None");
  return prepare_floating_clamp<&clamp_out>(args, call);
}

Status hardtanh_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_CHECK_OR_RETURN(args[0]->to_tensor().scalar_type() != ScalarType::kBool,
                     Error::kInvalidType,
                     "argument 'self' has dtype bool, which is not supported (supported: %s)",
                     kRealTypeNoBoolNames);
  return prepare_floating_clamp<&hardtanh_out>(args, call);
}

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

namespace {

// clamp.Tensor_out's operands: those present, self first (self and min, self
// and max, or all three).
struct ClampTensorOperands {
  NamedTensor inputs[3];
  size_t count;
  bool has_min;

  explicit ClampTensorOperands(Span<EValue*> args)
      : inputs{{args[0]->to_tensor(), "self"},
               {has_tensor(*args[1]) ? args[1]->to_tensor() : Tensor(), "min"},
               {has_tensor(*args[2]) ? args[2]->to_tensor() : Tensor(), "max"}},
        count(1 + (has_tensor(*args[1]) ? 1 : 0) + (has_tensor(*args[2]) ? 1 : 0)),
        has_min(has_tensor(*args[1])) {
    if (count == 2 && !has_min) inputs[1] = inputs[2];
  }
  Span<const NamedTensor> present() const { return Span<const NamedTensor>(inputs, count); }
};

// The rules of clamp.Tensor_out that do not depend on shapes: a bound is
// present, the operands promote to a supported dtype, out takes it.
Status check_clamp_tensor(const ClampTensorOperands& operands, const NamedTensor& out,
                          ScalarType* result) {
  TL_CHECK_OR_RETURN(operands.count > 1, Error::kInvalidArgument,
                     "at least one of arguments 'min' and 'max' must not be None");
  ResultType result_type;
  for (const NamedTensor& input : operands.present()) {
    TL_RETURN_IF_ERROR(result_type.add_tensor(input));
  }
  *result = result_type.get();
  const ElementwiseSpec& spec = operands.count == 3 ? kClampTensorSpec : kClampTensorOneBoundSpec;
  TL_RETURN_IF_ERROR(check_compute_dtype(*result, operands.present(), spec));
  return check_out_dtype_rule(*result, out, spec.out_rule);
}

// The element functions, shared by the reference and the dense eval: NaN in
// self or in a bound gives NaN.
constexpr auto kClampMin = [](auto x, auto lo) { return nan_max(x, lo); };
constexpr auto kClampMax = [](auto x, auto hi) { return nan_min(x, hi); };
constexpr auto kClampBoth = [](auto x, auto lo, auto hi) {
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    if (std::isnan(lo)) return lo;
    if (std::isnan(hi)) return hi;
  }
  return nan_min(nan_max(x, lo), hi);
};

// clamp.Tensor_out with every operand and out dense, of one dtype T (chosen
// at load) and, on this run, of one shape; anything else goes to the
// reference.
template <typename T>
void clamp_tensor_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  using Compute = opmath_t<T>;
  const ClampTensorOperands operands(args);
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  for (const NamedTensor& input : operands.present()) {
    if (!dense_path::same_sizes(self, input.tensor)) return clamp_tensor_out(ctx, args);
  }
  if (!dense_path::fit_out(self, out)) return clamp_tensor_out(ctx, args);
  const int64_t n = self.numel();
  const T* a = self.const_data_ptr<T>();
  const T* b = operands.inputs[1].tensor.const_data_ptr<T>();
  const T* c = operands.count == 3 ? operands.inputs[2].tensor.const_data_ptr<T>() : b;
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || b == nullptr || c == nullptr || z == nullptr)) {
    return clamp_tensor_out(ctx, args);
  }
  set_return(args, 4, *args[3]);
  auto at = [](const T* p, int64_t i) { return static_cast<Compute>(p[i]); };
  if (operands.count == 3) {
    for (int64_t i = 0; i < n; ++i) {
      z[i] = dense_path::store<T, T>(kClampBoth(at(a, i), at(b, i), at(c, i)));
    }
  } else if (operands.has_min) {
    for (int64_t i = 0; i < n; ++i) z[i] = dense_path::store<T, T>(kClampMin(at(a, i), at(b, i)));
  } else {
    for (int64_t i = 0; i < n; ++i) z[i] = dense_path::store<T, T>(kClampMax(at(a, i), at(b, i)));
  }
}

}  // namespace

Status clamp_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const ClampTensorOperands operands(args);
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ScalarType result;
  TL_RETURN_IF_ERROR(check_clamp_tensor(operands, out, &result));
  if (out.tensor.scalar_type() != result || !dense_path::is_dense(out.tensor)) return Error::kOk;
  for (const NamedTensor& input : operands.present()) {
    if (input.tensor.scalar_type() != result || !dense_path::is_dense(input.tensor)) {
      return Error::kOk;
    }
  }
  dense_path::visit_dense_dtype<DtypeSet::kRealNoBool>(result, [&](auto tag) {
    call->eval = &clamp_tensor_dense_eval<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

void clamp_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const ClampTensorOperands operands(args);
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ScalarType result;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_clamp_tensor(operands, out, &result));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(operands.present(), out));

  const NamedTensor& self = operands.inputs[0];
  const NamedTensor& bound = operands.inputs[1];
  TL_SWITCH_DTYPE_SET(DtypeSet::kReal, result, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    Status status;
    if (operands.count == 2 && operands.has_min) {
      status = apply_binary_elementwise<CTYPE>(
          self, bound, out, [](Compute x, Compute lo) { return kClampMin(x, lo); });
    } else if (operands.count == 2) {
      status = apply_binary_elementwise<CTYPE>(
          self, bound, out, [](Compute x, Compute hi) { return kClampMax(x, hi); });
    } else if constexpr (!std::is_same_v<CTYPE, bool>) {  // Rejected above for two bounds.
      status = apply_ternary_elementwise<CTYPE>(
          self, bound, operands.inputs[2], out,
          [](Compute x, Compute lo, Compute hi) { return kClampBoth(x, lo, hi); });
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, status);
  });
}

}  // namespace torchlight::portable
