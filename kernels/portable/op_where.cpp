// aten::where.self_out and aten::masked_fill.Scalar_out: elementwise
// selection.
//
// ATen semantics:
// - where.self_out: out = condition ? self : other. condition must be bool
//   (uint8 is still accepted, deprecated in ATen); self and other promote
//   to their common dtype, and out must have exactly that dtype; all three
//   broadcast together.
// - masked_fill.Scalar_out: out = mask ? value : self. mask must be bool
//   and broadcasts with self (the result has the broadcast shape); value is
//   converted to self's dtype with an overflow check (NaN into an integer
//   tensor is an error); out must have exactly self's dtype.
//
// where.self_out has a prepare step: the dtype rules above are checked once
// at load (rejecting there, naming the argument), and for a dense bool
// condition with self, other and out of one float32/float64/int32/int64
// dtype it installs where_dense_eval: same-shape operands take a plain loop,
// anything else (broadcasting, a failed resize) the reference eval.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// The dtype rules of where.self_out, which do not depend on shapes.
// Errors: kInvalidType naming 'condition' or 'out' (or an input whose dtype
// does not promote).
Status check_where_dtypes(const NamedTensor& condition, const NamedTensor& self,
                          const NamedTensor& other, const NamedTensor& out, ScalarType* common) {
  const ScalarType condition_type = condition.tensor.scalar_type();
  TL_CHECK_OR_RETURN(condition_type == ScalarType::kBool || condition_type == ScalarType::kByte,
                     Error::kInvalidType, "argument 'condition' has dtype %s, expected bool",
                     to_string(condition_type));
  TL_RETURN_IF_ERROR(compute_result_type(self, other, common));
  return check_out_dtype_rule(*common, out, OutDtypeRule::kSame);
}

template <typename T>
void where_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor condition = args[0]->to_tensor();
  const Tensor self = args[1]->to_tensor();
  const Tensor other = args[2]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  if (!dense_path::same_sizes(self, condition) || !dense_path::same_sizes(self, other) ||
      !dense_path::fit_out(self, out)) {
    return where_self_out(ctx, args);
  }
  const int64_t n = self.numel();
  // A bool is read as its byte, as the reference does: nonzero is true.
  const uint8_t* c = static_cast<const uint8_t*>(condition.const_data_ptr());
  const T* a = self.const_data_ptr<T>();
  const T* b = other.const_data_ptr<T>();
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (c == nullptr || a == nullptr || b == nullptr || z == nullptr)) {
    return where_self_out(ctx, args);
  }
  set_return(args, 4, *args[3]);
  for (int64_t i = 0; i < n; ++i) z[i] = c[i] != 0 ? a[i] : b[i];
}

}  // namespace

Status where_self_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor condition{args[0]->to_tensor(), "condition"};
  const NamedTensor self{args[1]->to_tensor(), "self"};
  const NamedTensor other{args[2]->to_tensor(), "other"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ScalarType common;
  TL_RETURN_IF_ERROR(check_where_dtypes(condition, self, other, out, &common));
  if (condition.tensor.scalar_type() != ScalarType::kBool ||
      self.tensor.scalar_type() != common || other.tensor.scalar_type() != common) {
    return Error::kOk;
  }
  for (const NamedTensor* t : {&condition, &self, &other, &out}) {
    if (!dense_path::is_dense(t->tensor)) return Error::kOk;
  }
  dense_path::visit_dense_dtype<DtypeSet::kReal>(common, [&](auto tag) {
    call->eval = &where_dense_eval<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

void where_self_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor condition{args[0]->to_tensor(), "condition"};
  const NamedTensor self{args[1]->to_tensor(), "self"};
  const NamedTensor other{args[2]->to_tensor(), "other"};
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ScalarType common;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_where_dtypes(condition, self, other, out, &common));
  const NamedTensor inputs[] = {condition, self, other};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(inputs, out));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    // A bool or uint8 condition converts to any real type without turning a
    // nonzero value into zero.
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_ternary_elementwise<CTYPE>(
                                       condition, self, other, out,
                                       [](Compute c, Compute a, Compute b) {
                                         return c != Compute(0) ? a : b;
                                       }));
  });
}

namespace {

// The dtype rules of masked_fill.Scalar_out, which do not depend on shapes.
Status check_masked_fill_dtypes(const NamedTensor& self, const NamedTensor& mask,
                                const NamedTensor& out) {
  TL_CHECK_OR_RETURN(mask.tensor.scalar_type() == ScalarType::kBool, Error::kInvalidType,
                     "argument 'mask' has dtype %s, expected bool",
                     to_string(mask.tensor.scalar_type()));
  return check_out_dtype_rule(self.tensor.scalar_type(), out, OutDtypeRule::kSame);
}

// The fill value as the reference converts it, when it plainly fits T (an
// Int in T's range; a Double for a floating T, in range or not finite);
// false hands the call to the reference, which decides.
template <typename T>
bool fill_value_as(const EValue& value, T* fill) {
  if (value.is_int()) {
    if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(int64_t)) {
      const int64_t v = value.to_int();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
    }
  } else if (value.is_double()) {
    if constexpr (std::is_integral_v<T>) return false;
    const double v = value.to_double();
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max())) {
      return false;
    }
  } else {
    return false;
  }
  *fill = convert<T>(scalar_to<T>(value));
  return true;
}

// masked_fill.Scalar_out with self, a bool mask and out dense, self and out
// of dtype T (chosen at load) and, on this run, self and mask of one shape.
template <typename T>
void masked_fill_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor mask = args[1]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  T fill;
  if (!fill_value_as(*args[2], &fill) || !dense_path::same_sizes(self, mask) ||
      !dense_path::fit_out(self, out)) {
    return masked_fill_scalar_out(ctx, args);
  }
  const int64_t n = self.numel();
  // A bool is read as its byte, as the reference does: nonzero is true.
  const uint8_t* m = static_cast<const uint8_t*>(mask.const_data_ptr());
  const T* a = self.const_data_ptr<T>();
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (m == nullptr || a == nullptr || z == nullptr)) {
    return masked_fill_scalar_out(ctx, args);
  }
  set_return(args, 4, *args[3]);
  for (int64_t i = 0; i < n; ++i) z[i] = m[i] != 0 ? fill : a[i];
}

}  // namespace

Status masked_fill_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mask{args[1]->to_tensor(), "mask"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_masked_fill_dtypes(self, mask, out));
  for (const NamedTensor* t : {&self, &mask, &out}) {
    if (!dense_path::is_dense(t->tensor)) return Error::kOk;
  }
  dense_path::visit_dense_dtype<DtypeSet::kReal>(self.tensor.scalar_type(), [&](auto tag) {
    call->eval = &masked_fill_dense_eval<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

void masked_fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mask{args[1]->to_tensor(), "mask"};
  const EValue& value = *args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};

  const ScalarType type = self.tensor.scalar_type();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_masked_fill_dtypes(self, mask, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(self, mask, out));

  TL_SWITCH_REAL_TYPES(type, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(value, type, "value"));
    const Compute fill = convert<Compute>(scalar_to<CTYPE>(value));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_binary_elementwise<CTYPE>(self, mask, out, [fill](Compute x, Compute m) {
          return m != Compute(0) ? fill : x;
        }));
  });
}

}  // namespace torchlight::portable
