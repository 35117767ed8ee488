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
#include "kernels/portable/util/dense_path.h"
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

// Runs out = op(x) over a float self whose out is args[kOut], after the
// schema check; kMakeOp(TypeTag<CTYPE>{}, args) returns the op for one type
// (the dense eval prepare installs builds it the same way).
template <size_t kOut, const auto& kMakeOp>
void float_activation(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, kOut + 1, *args[kOut]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare_unary(self, out, kActivationSpec, &compute));
  TL_SWITCH_DTYPE_SET(DtypeSet::kFloat, compute, ctx, "self", CTYPE, [&] {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_unary_elementwise<CTYPE>(self, out, kMakeOp(TypeTag<CTYPE>{}, args)));
  });
}

// The prepare step of a float_activation<kOut, kMakeOp> kernel.
template <size_t kOut, const auto& kMakeOp, KernelFunction reference>
Status prepare_float_activation(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  return dense_path::prepare_unary_params_op<kActivationSpec, kOut, kMakeOp, reference>(ctx, args,
                                                                                      call);
}

// gelu's two forms; `approximate` is a string constant, parsed at load.
template <bool kTanh>
constexpr auto kGeluOp = [](auto tag, Span<EValue*>) {
  using Compute = opmath_t<typename decltype(tag)::type>;
  return [](Compute x) {
    const Compute half = Compute(0.5);
    if constexpr (kTanh) {
      const Compute kBeta = static_cast<Compute>(0.7978845608028654);  // sqrt(2 / pi)
      const Compute kKappa = static_cast<Compute>(0.044715);
      const Compute inner = kBeta * (x + kKappa * x * x * x);
      return half * x * (Compute(1) + std::tanh(inner));
    } else {
      const Compute kSqrtHalf = static_cast<Compute>(0.7071067811865476);  // 1 / sqrt(2)
      return x * half * (Compute(1) + std::erf(x * kSqrtHalf));
    }
  };
};

Status parse_gelu_approximate(const EValue& value, bool* use_tanh) {
  const std::string_view approximate = value.to_string();
  *use_tanh = approximate == "tanh";
  TL_CHECK_OR_RETURN(*use_tanh || approximate == "none", Error::kInvalidArgument,
                     "argument 'approximate' is '%.*s', expected 'none' or 'tanh'",
                     static_cast<int>(approximate.size()), approximate.data());
  return Error::kOk;
}

// leaky_relu(self, negative_slope, out).
constexpr auto kLeakyReluOp = [](auto tag, Span<EValue*> args) {
  using Compute = opmath_t<typename decltype(tag)::type>;
  const Compute negative_slope = scalar_to<Compute>(*args[1]);
  return [negative_slope](Compute x) { return x > Compute(0) ? x : x * negative_slope; };
};

// elu(self, alpha, scale, input_scale, out).
constexpr auto kEluOp = [](auto tag, Span<EValue*> args) {
  using Compute = opmath_t<typename decltype(tag)::type>;
  const Compute positive = scalar_to<Compute>(*args[2]);
  const Compute negative = scalar_to<Compute>(*args[1]) * positive;
  const Compute input = scalar_to<Compute>(*args[3]);
  return [positive, negative, input](Compute x) {
    return x > Compute(0) ? x * positive : std::expm1(x * input) * negative;
  };
};

// softplus(self, beta, threshold, out).
constexpr auto kSoftplusOp = [](auto tag, Span<EValue*> args) {
  using Compute = opmath_t<typename decltype(tag)::type>;
  const Compute beta = scalar_to<Compute>(*args[1]);
  const Compute threshold = scalar_to<Compute>(*args[2]);
  return [beta, threshold](Compute x) {
    const Compute scaled = x * beta;
    return scaled > threshold ? x : std::log1p(std::exp(scaled)) / beta;
  };
};

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
  bool use_tanh;
  TL_KERNEL_RETURN_IF_ERROR(ctx, parse_gelu_approximate(*args[1], &use_tanh));
  if (use_tanh) {
    float_activation<2, kGeluOp<true>>(ctx, args);
  } else {
    float_activation<2, kGeluOp<false>>(ctx, args);
  }
}

Status gelu_out_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  bool use_tanh;
  TL_RETURN_IF_ERROR(parse_gelu_approximate(*args[1], &use_tanh));
  return use_tanh ? prepare_float_activation<2, kGeluOp<true>, &gelu_out>(ctx, args, call)
                  : prepare_float_activation<2, kGeluOp<false>, &gelu_out>(ctx, args, call);
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
  float_activation<2, kLeakyReluOp>(ctx, args);
}

Status leaky_relu_out_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  return prepare_float_activation<2, kLeakyReluOp, &leaky_relu_out>(ctx, args, call);
}

void elu_out(KernelContext& ctx, Span<EValue*> args) { float_activation<4, kEluOp>(ctx, args); }

Status elu_out_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  return prepare_float_activation<4, kEluOp, &elu_out>(ctx, args, call);
}

void softplus_out(KernelContext& ctx, Span<EValue*> args) {
  float_activation<3, kSoftplusOp>(ctx, args);
}

Status softplus_out_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  return prepare_float_activation<3, kSoftplusOp, &softplus_out>(ctx, args, call);
}

}  // namespace torchlight::portable
