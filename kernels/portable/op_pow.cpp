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

}  // namespace

void pow_tensor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  binary_kernel<kPowSpec>(ctx, args, kPow, "exponent");
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
    using Compute = opmath_t<CTYPE>;
    if constexpr (std::is_integral_v<CTYPE>) {
      TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(exponent, common, "exponent"));
      const CTYPE e = scalar_to<CTYPE>(exponent);
      TL_KERNEL_RETURN_IF_ERROR(
          ctx, map_to_out<CTYPE>(self, out, [e](CTYPE x) { return integer_power(x, e); }));
    } else {
      const Compute e = convert<Compute>(scalar_to<CTYPE>(exponent));
      if constexpr (!std::is_same_v<CTYPE, Half>) {
        if (e == Compute(0.5)) {
          TL_KERNEL_RETURN_IF_ERROR(
              ctx, map_to_out<CTYPE>(self, out, [](Compute x) { return std::sqrt(x); }));
          return;
        }
        if (e == Compute(-0.5)) {
          TL_KERNEL_RETURN_IF_ERROR(ctx, map_to_out<CTYPE>(self, out, [](Compute x) {
                                      return Compute(1) / std::sqrt(x);
                                    }));
          return;
        }
      }
      TL_KERNEL_RETURN_IF_ERROR(
          ctx, map_to_out<CTYPE>(self, out, [e](Compute x) { return std::pow(x, e); }));
    }
  });
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
