// aten::pow.Tensor_Tensor_out, pow.Tensor_Scalar_out, pow.Scalar_out:
// out = self ** exponent.
//
// ATen semantics: type promotion (bool ** bool is not supported). Integers
// use exact powers that wrap on overflow; a negative integer exponent gives
// 1 for base 1, +-1 for base -1 and 0 otherwise, except that a negative
// integer Scalar exponent on an integer or bool tensor is an error. A Scalar
// exponent is converted to the compute dtype (checked for overflow when it
// is an integer type); 0 fills out with 1 and 1 copies self, whatever the
// dtype; 0.5 and -0.5 are sqrt and 1/sqrt (so (-inf) ** 0.5 is NaN), as in
// ATen, except for float16, which ATen computes with std::pow. A base Scalar
// of 1 fills out with 1. Floats use std::pow in float for float16/bfloat16.
// out takes any dtype the result casts to.
#include <cmath>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/binary_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/scalar_math.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kPowSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                   OutDtypeRule::kCanCast};

constexpr auto kPow = [](auto base, auto exponent) {
  if constexpr (std::is_integral_v<decltype(base)>) {
    return integer_power(base, exponent);
  } else {
    return std::pow(base, exponent);
  }
};

// c10's Scalar::equal: a Bool only equals a bool, numbers only numbers.
bool scalar_equals(const EValue& scalar, int64_t value) {
  if (scalar.is_bool()) return false;
  if (scalar.is_double()) return scalar.to_double() == static_cast<double>(value);
  return scalar.to_int() == value;
}
bool scalar_equals(const EValue& scalar, bool value) {
  return scalar.is_bool() && scalar.to_bool() == value;
}

// out = fn(input) for every element, computed as the common dtype CTYPE.
template <typename CTYPE, typename Fn>
Status map_to_out(const NamedTensor& input, const NamedTensor& out, Fn fn) {
  using Compute = opmath_t<CTYPE>;
  return apply_unary_elementwise<CTYPE>(input, out,
                                        [&fn](Compute x) { return static_cast<Compute>(fn(x)); });
}

// Calls visit(op) with the element function of self ** exponent for a
// floating CTYPE, exponent an Int or a Double (not 0 or 1, which the
// callers shortcut), as ATen chooses it.
template <typename CTYPE, typename Visit>
void with_float_power(const EValue& exponent, const Visit& visit) {
  using Compute = opmath_t<CTYPE>;
  const Compute e = convert<Compute>(scalar_to<CTYPE>(exponent));
  if constexpr (!std::is_same_v<CTYPE, Half>) {
    // Squares (rmsnorm's x ** 2): ATen multiplies, and a libm pow call per
    // element cost a tenth of an LLM's prefill.
    if (e == Compute(2)) return visit([](Compute x) { return x * x; });
    if (e == Compute(0.5)) return visit([](Compute x) { return std::sqrt(x); });
    if (e == Compute(-0.5)) return visit([](Compute x) { return Compute(1) / std::sqrt(x); });
  }
  visit([e](Compute x) { return std::pow(x, e); });
}

// pow.Tensor_Scalar_out on a dense float32/float64 self and out of that
// dtype, chosen at load. The exponent is read on every run; a Bool (or
// anything but a number) goes to the reference.
template <typename T>
void pow_tensor_scalar_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const EValue& exponent = *args[1];
  const Tensor out = args[2]->to_tensor();
  if (!(exponent.is_int() || exponent.is_double()) || !dense_path::fit_out(self, out)) {
    return pow_tensor_scalar_out(ctx, args);
  }
  const int64_t n = self.numel();
  const T* a = self.const_data_ptr<T>();
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || z == nullptr)) return pow_tensor_scalar_out(ctx, args);
  set_return(args, 3, *args[2]);
  if (scalar_equals(exponent, int64_t{0})) {
    for (int64_t i = 0; i < n; ++i) z[i] = T(1);
  } else if (scalar_equals(exponent, int64_t{1})) {
    for (int64_t i = 0; i < n; ++i) z[i] = a[i];
  } else {
    with_float_power<T>(exponent, [&](auto op) {
      for (int64_t i = 0; i < n; ++i) z[i] = op(a[i]);
    });
  }
}

// pow.Scalar_out on a dense float32/float64 exponent and out of that dtype,
// chosen at load; a Bool base goes to the reference.
template <typename T>
void pow_scalar_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const EValue& base = *args[0];
  const Tensor exponent = args[1]->to_tensor();
  const Tensor out = args[2]->to_tensor();
  if (!(base.is_int() || base.is_double()) || !dense_path::fit_out(exponent, out)) {
    return pow_scalar_out(ctx, args);
  }
  const int64_t n = exponent.numel();
  const T* e = exponent.const_data_ptr<T>();
  T* z = out.mutable_data_ptr<T>();
  if (n > 0 && (e == nullptr || z == nullptr)) return pow_scalar_out(ctx, args);
  set_return(args, 3, *args[2]);
  if (scalar_equals(base, int64_t{1})) {
    for (int64_t i = 0; i < n; ++i) z[i] = T(1);
    return;
  }
  const T b = convert<T>(scalar_to<T>(base));
  for (int64_t i = 0; i < n; ++i) z[i] = kPow(b, e[i]);
}

// Installs dense_eval<float> or <double> when `tensor` and out are dense
// and of that dtype.
template <template <typename> class DenseEval>
void choose_float_dense_eval(const Tensor& tensor, const Tensor& out, PreparedCall* call) {
  const ScalarType type = tensor.scalar_type();
  if (out.scalar_type() != type || !dense_path::is_dense(tensor) || !dense_path::is_dense(out)) {
    return;
  }
  if (type == ScalarType::kFloat) call->eval = &DenseEval<float>::eval;
  if (type == ScalarType::kDouble) call->eval = &DenseEval<double>::eval;
}

template <typename T>
struct TensorScalarDense {
  static void eval(KernelContext& ctx, Span<EValue*> args) {
    pow_tensor_scalar_dense_eval<T>(ctx, args);
  }
};
template <typename T>
struct ScalarDense {
  static void eval(KernelContext& ctx, Span<EValue*> args) { pow_scalar_dense_eval<T>(ctx, args); }
};

}  // namespace

void pow_tensor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kPowSpec>(ctx, args, kPow, "exponent");
}

Status pow_tensor_tensor_out_prepare(PrepareContext& ctx, Span<EValue*> args,
                                     PreparedCall* call) {
  return dense_path::prepare_binary_op<kPowSpec, kPow, &pow_tensor_tensor_out>(ctx, args, call,
                                                                              "exponent");
}

// What the dtypes decide for a floating self: the exponent never promotes
// it, so out's dtype is checked at load. The exponent's value may change
// between runs and stays with the eval.
Status pow_tensor_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Tensor self = args[0]->to_tensor();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  if (!is_floating_point(self.scalar_type())) return Error::kOk;
  TL_RETURN_IF_ERROR(check_out_dtype(self.scalar_type(), out));
  choose_float_dense_eval<TensorScalarDense>(self, out.tensor, call);
  return Error::kOk;
}

void pow_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const EValue& exponent = *args[1];
  const NamedTensor out{args[2]->to_tensor(), "out"};

  const ScalarType self_type = self.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx,
                  !((is_integral(self_type) || self_type == ScalarType::kBool) &&
                    exponent.is_int() && exponent.to_int() < 0),
                  Error::kInvalidArgument,
                  "argument 'exponent' = %lld: integers to negative integer powers are not "
                  "allowed (self has dtype %s)",
                  static_cast<long long>(exponent.is_int() ? exponent.to_int() : 0),
                  to_string(self_type));
  ResultType result_type;
  TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(self));
  result_type.add_scalar(exponent);
  const ScalarType common = result_type.get();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  // ATen's shortcuts, which also make bool ** False and bool ** True work.
  if (scalar_equals(exponent, int64_t{0}) || scalar_equals(exponent, false)) {
    TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
      TL_KERNEL_RETURN_IF_ERROR(ctx, map_to_out<CTYPE>(self, out, [](auto) { return 1; }));
    });
    return;
  }
  if (scalar_equals(exponent, int64_t{1}) || scalar_equals(exponent, true)) {
    TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
      TL_KERNEL_RETURN_IF_ERROR(ctx, map_to_out<CTYPE>(self, out, [](auto x) { return x; }));
    });
    return;
  }

  // A Bool exponent is 0 or 1, handled above, so common is not bool here.
  TL_SWITCH_REAL_TYPES_NO_BOOL(common, ctx, "self", CTYPE, [&] {
    if constexpr (std::is_integral_v<CTYPE>) {
      TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(exponent, common, "exponent"));
      const CTYPE e = scalar_to<CTYPE>(exponent);
      TL_KERNEL_RETURN_IF_ERROR(
          ctx, map_to_out<CTYPE>(self, out, [e](CTYPE x) { return integer_power(x, e); }));
    } else {
      with_float_power<CTYPE>(exponent, [&](auto op) {
        TL_KERNEL_RETURN_IF_ERROR(ctx, map_to_out<CTYPE>(self, out, op));
      });
    }
  });
}

// As pow_tensor_scalar_out_prepare, for a floating exponent tensor.
Status pow_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Tensor exponent = args[1]->to_tensor();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  if (!is_floating_point(exponent.scalar_type())) return Error::kOk;
  TL_RETURN_IF_ERROR(check_out_dtype(exponent.scalar_type(), out));
  choose_float_dense_eval<ScalarDense>(exponent, out.tensor, call);
  return Error::kOk;
}

void pow_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const EValue& base = *args[0];
  const NamedTensor exponent{args[1]->to_tensor(), "exponent"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ResultType result_type;
  TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(exponent));
  result_type.add_scalar(base);
  const ScalarType common = result_type.get();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, exponent.tensor.sizes()));

  if (scalar_equals(base, int64_t{1})) {
    TL_SWITCH_REAL_TYPES(common, ctx, "exponent", CTYPE, [&] {
      TL_KERNEL_RETURN_IF_ERROR(ctx, map_to_out<CTYPE>(exponent, out, [](auto) { return 1; }));
    });
    return;
  }
  TL_SWITCH_REAL_TYPES_NO_BOOL(common, ctx, "exponent", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    // The base becomes a tensor of the common dtype, converted unchecked.
    const Compute b = convert<Compute>(scalar_to<CTYPE>(base));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, map_to_out<CTYPE>(exponent, out, [b](Compute e) { return kPow(b, e); }));
  });
}

}  // namespace torchlight::portable
