// Activation functions: relu, gelu, silu, hardswish, hardsigmoid,
// leaky_relu, elu, softplus (the .out overloads).
//
// ATen semantics: all keep self's dtype and need exactly it in out. relu
// also takes integers (not bool); the others take floats only.
// float16/bfloat16 compute in float, with Scalar parameters converted to
// float (to double for float64). NaN propagates through every one.
//   relu(x)         = max(x, 0)
//   gelu(x)         = x/2 (1 + erf(x / sqrt 2)), or with approximate="tanh"
//                     x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   silu(x)         = x / (1 + exp(-x))
//   hardsigmoid(x)  = min(max(x + 3, 0), 6) / 6;  hardswish(x) = x hardsigmoid(x)
//   leaky_relu(x)   = x > 0 ? x : negative_slope x
//   elu(x)          = x > 0 ? scale x : alpha scale (exp(input_scale x) - 1)
//   softplus(x)     = beta x > threshold ? x : log(1 + exp(beta x)) / beta
#include <cmath>
#include <string_view>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/scalar_math.h"
#include "kernels/portable/util/unary_ops.h"

namespace torchlight::portable {

namespace {

constexpr ElementwiseSpec kReluSpec{DtypeSet::kRealNoBool, Promotion::kDefault,
                                    OutDtypeRule::kSame};
constexpr ElementwiseSpec kActivationSpec{DtypeSet::kFloat, Promotion::kDefault,
                                          OutDtypeRule::kSame};

// Runs out = op_for<CTYPE>(x) over a float self whose out is args[out_index],
// after the schema check; `make_op(TypeTag<CTYPE>)` returns the op for one type.
template <typename MakeOp>
void float_activation(KernelContext& ctx, Span<EValue*> args, size_t out_index,
                      const MakeOp& make_op) {
  set_return(args, out_index + 1, *args[out_index]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[out_index]->to_tensor(), "out"};
  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare_unary(self, out, kActivationSpec, &compute));
  TL_SWITCH_DTYPE_SET(DtypeSet::kFloat, compute, ctx, "self", CTYPE, [&] {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_unary_elementwise<CTYPE>(self, out, make_op(TypeTag<CTYPE>{})));
  });
}

template <typename T>
T hardsigmoid(T x) {
  return nan_min(nan_max(x + T(3), T(0)), T(6)) / T(6);
}

}  // namespace

constexpr auto kReluOp = [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    return x < T(0) ? T(0) : x;  // NaN < 0 is false: NaN stays.
  }
};
TL_UNARY_KERNEL(relu_out, kReluSpec, kReluOp)

void gelu_out(KernelContext& ctx, Span<EValue*> args) {
  const std::string_view approximate = args[1]->to_string();
  const bool use_tanh = approximate == "tanh";
  TL_KERNEL_CHECK(ctx, use_tanh || approximate == "none", Error::kInvalidArgument,
                  "argument 'approximate' is '%.*s', expected 'none' or 'tanh'",
                  static_cast<int>(approximate.size()), approximate.data());
  float_activation(ctx, args, 2, [use_tanh](auto tag) {
    using Compute = opmath_t<typename decltype(tag)::type>;
    return [use_tanh](Compute x) {
      const Compute half = Compute(0.5);
      if (use_tanh) {
        const Compute kBeta = static_cast<Compute>(0.7978845608028654);  // sqrt(2 / pi)
        const Compute kKappa = static_cast<Compute>(0.044715);
        const Compute inner = kBeta * (x + kKappa * x * x * x);
        return half * x * (Compute(1) + std::tanh(inner));
      }
      const Compute kSqrtHalf = static_cast<Compute>(0.7071067811865476);  // 1 / sqrt(2)
      return x * half * (Compute(1) + std::erf(x * kSqrtHalf));
    };
  });
}

constexpr auto kSiluOp = [](auto x) {
  using T = decltype(x);
  return x / (T(1) + std::exp(-x));
};
TL_UNARY_KERNEL(silu_out, kActivationSpec, kSiluOp)

constexpr auto kHardsigmoidOp = [](auto x) { return hardsigmoid(x); };
TL_UNARY_KERNEL(hardsigmoid_out, kActivationSpec, kHardsigmoidOp)

constexpr auto kHardswishOp = [](auto x) {
  using T = decltype(x);
  return x * nan_min(nan_max(x + T(3), T(0)), T(6)) / T(6);
};
TL_UNARY_KERNEL(hardswish_out, kActivationSpec, kHardswishOp)

void leaky_relu_out(KernelContext& ctx, Span<EValue*> args) {
  const EValue& slope = *args[1];
  float_activation(ctx, args, 2, [&slope](auto tag) {
    using Compute = opmath_t<typename decltype(tag)::type>;
    const Compute negative_slope = scalar_to<Compute>(slope);
    return [negative_slope](Compute x) { return x > Compute(0) ? x : x * negative_slope; };
  });
}

void elu_out(KernelContext& ctx, Span<EValue*> args) {
  const EValue& alpha = *args[1];
  const EValue& scale = *args[2];
  const EValue& input_scale = *args[3];
  float_activation(ctx, args, 4, [&](auto tag) {
    using Compute = opmath_t<typename decltype(tag)::type>;
    const Compute positive = scalar_to<Compute>(scale);
    const Compute negative = scalar_to<Compute>(alpha) * positive;
    const Compute input = scalar_to<Compute>(input_scale);
    return [positive, negative, input](Compute x) {
      return x > Compute(0) ? x * positive : std::expm1(x * input) * negative;
    };
  });
}

void softplus_out(KernelContext& ctx, Span<EValue*> args) {
  const EValue& beta_arg = *args[1];
  const EValue& threshold_arg = *args[2];
  float_activation(ctx, args, 3, [&](auto tag) {
    using Compute = opmath_t<typename decltype(tag)::type>;
    const Compute beta = scalar_to<Compute>(beta_arg);
    const Compute threshold = scalar_to<Compute>(threshold_arg);
    return [beta, threshold](Compute x) {
      const Compute scaled = x * beta;
      return scaled > threshold ? x : std::log1p(std::exp(scaled)) / beta;
    };
  });
}

}  // namespace torchlight::portable
