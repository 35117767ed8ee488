// Shared pieces of the quantized kernels: the dtypes a quantized tensor may
// have and their value bounds, ScalarType arguments, rounding to a float
// type, and the per-element quantize step, all with the semantics of
// torch.ao.quantization.fx._decomposed (the functional reference of every
// operator here). Header-only; every function returns a Status naming the
// argument, and the TL_KERNEL_* macros add the operator.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/evalue.h"
#include "runtime/core/half.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::quantized {

using portable::NamedTensor;
using portable::set_return;

/// A type as a value, for the visit_* dispatchers.
template <typename T>
struct TypeTag {
  using type = T;
};

/// The integer dtypes a quantized tensor may have (torch's
/// _DTYPE_TO_QVALUE_BOUNDS less uint16, which the portable dtype set lacks).
template <typename Fn>
bool visit_quant_int_type(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::kByte: fn(TypeTag<uint8_t>{}); return true;
    case ScalarType::kChar: fn(TypeTag<int8_t>{}); return true;
    case ScalarType::kShort: fn(TypeTag<int16_t>{}); return true;
    case ScalarType::kInt: fn(TypeTag<int32_t>{}); return true;
    default: return false;
  }
}
inline constexpr const char* kQuantIntTypeNames = "uint8, int8, int16 or int32";

/// Float dtypes quantize accepts (torch converts float16/bfloat16 to float32 first).
template <typename Fn>
bool visit_quant_float_input(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); return true;
    case ScalarType::kHalf: fn(TypeTag<Half>{}); return true;
    case ScalarType::kBFloat16: fn(TypeTag<BFloat16>{}); return true;
    default: return false;
  }
}
inline constexpr const char* kQuantFloatInputNames = "float32, float16 or bfloat16";

/// Float dtypes a dequantized result may have.
template <typename Fn>
bool visit_float_result(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); return true;
    case ScalarType::kHalf: fn(TypeTag<Half>{}); return true;
    case ScalarType::kBFloat16: fn(TypeTag<BFloat16>{}); return true;
    case ScalarType::kDouble: fn(TypeTag<double>{}); return true;
    default: return false;
  }
}
inline constexpr const char* kFloatResultNames = "float32, float16, bfloat16 or float64";

/// Scale tensors: float32 or float64 (the arithmetic then happens in that type).
template <typename Fn>
bool visit_scale_type(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); return true;
    case ScalarType::kDouble: fn(TypeTag<double>{}); return true;
    default: return false;
  }
}

/// Zero-point tensors: any integer dtype, read as int64.
inline bool is_zero_point_dtype(ScalarType t) {
  return t == ScalarType::kByte || t == ScalarType::kChar || t == ScalarType::kShort ||
         t == ScalarType::kInt || t == ScalarType::kLong;
}

/// Element `i` of an integer tensor of any integer dtype (is_zero_point_dtype).
inline int64_t load_int(const Tensor& t, int64_t i) {
  switch (t.scalar_type()) {
    case ScalarType::kByte: return t.const_data_ptr<uint8_t>()[i];
    case ScalarType::kChar: return t.const_data_ptr<int8_t>()[i];
    case ScalarType::kShort: return t.const_data_ptr<int16_t>()[i];
    case ScalarType::kInt: return t.const_data_ptr<int32_t>()[i];
    default: return t.const_data_ptr<int64_t>()[i];
  }
}

/// Element `i` of a float32 or float64 tensor, as double.
inline double load_scale(const Tensor& t, int64_t i) {
  return t.scalar_type() == ScalarType::kDouble ? t.const_data_ptr<double>()[i]
                                                : static_cast<double>(t.const_data_ptr<float>()[i]);
}

/// The value bounds of a quantized integer dtype. False for other dtypes.
inline bool quant_bounds(ScalarType t, int64_t* low, int64_t* high) {
  bool known = visit_quant_int_type(t, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    *low = std::numeric_limits<Q>::min();
    *high = std::numeric_limits<Q>::max();
  });
  return known;
}

/// A ScalarType argument (an Int holding ATen's code).
/// Errors: kInvalidType naming `name` when the code is no dtype.
inline Status scalar_type_arg(const EValue& value, const char* name, ScalarType* out) {
  TL_CHECK_OR_RETURN(value.is_int(), Error::kInvalidType,
                     "argument '%s' must be a ScalarType (an int)", name);
  const int64_t code = value.to_int();
  const bool known = code >= 0 && code <= 29 && is_valid(static_cast<ScalarType>(code));
  TL_CHECK_OR_RETURN(known, Error::kInvalidType, "argument '%s' holds %lld, which is no dtype",
                     name, static_cast<long long>(code));
  *out = static_cast<ScalarType>(code);
  return Error::kOk;
}

/// A ScalarType? argument: `fallback` when None.
inline Status optional_scalar_type_arg(const EValue& value, const char* name, ScalarType fallback,
                                       ScalarType* out) {
  if (value.is_none()) {
    *out = fallback;
    return Error::kOk;
  }
  return scalar_type_arg(value, name, out);
}

/// quant_min/quant_max against `dtype` (torch's _quant_min_max_bounds_check),
/// and quant_min <= quant_max. Errors: kInvalidType when `dtype` is not a
/// quantized integer dtype; kInvalidArgument naming the bound otherwise.
inline Status check_quant_range(int64_t quant_min, int64_t quant_max, ScalarType dtype,
                                const char* prefix = "") {
  int64_t low = 0, high = 0;
  TL_CHECK_OR_RETURN(quant_bounds(dtype, &low, &high), Error::kInvalidType,
                     "argument '%sdtype' is %s, expected %s", prefix, to_string(dtype),
                     kQuantIntTypeNames);
  TL_CHECK_OR_RETURN(quant_min >= low, Error::kInvalidArgument,
                     "argument '%squant_min' is %lld, below %lld, the minimum of %s", prefix,
                     static_cast<long long>(quant_min), static_cast<long long>(low),
                     to_string(dtype));
  TL_CHECK_OR_RETURN(quant_max <= high, Error::kInvalidArgument,
                     "argument '%squant_max' is %lld, above %lld, the maximum of %s", prefix,
                     static_cast<long long>(quant_max), static_cast<long long>(high),
                     to_string(dtype));
  TL_CHECK_OR_RETURN(quant_min <= quant_max, Error::kInvalidArgument,
                     "argument '%squant_min' (%lld) is greater than '%squant_max' (%lld)", prefix,
                     static_cast<long long>(quant_min), prefix,
                     static_cast<long long>(quant_max));
  return Error::kOk;
}

/// A quantization scale must be finite and positive (quantizing divides by it).
inline Status check_scale_value(double scale, const char* name, int64_t index = -1) {
  if (std::isfinite(scale) && scale > 0) return Error::kOk;
  if (index < 0) {
    return Status::error(Error::kInvalidArgument,
                         "argument '%s' is %g, expected a finite scale > 0", name, scale);
  }
  return Status::error(Error::kInvalidArgument,
                       "argument '%s' holds %g at %lld, expected finite scales > 0", name, scale,
                       static_cast<long long>(index));
}

/// Errors: kInvalidType unless `t` has `dtype`.
inline Status check_dtype(const NamedTensor& t, ScalarType dtype) {
  TL_CHECK_OR_RETURN(t.tensor.scalar_type() == dtype, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected %s", t.name,
                     to_string(t.tensor.scalar_type()), to_string(dtype));
  return Error::kOk;
}

/// Errors: kInvalidArgument unless `t` is in the default (row-major) dim
/// order, which every quantized kernel assumes, or has no data to walk.
inline Status check_contiguous(const NamedTensor& t) {
  TL_CHECK_OR_RETURN(is_contiguous_dim_order(t.tensor.dim_order()), Error::kInvalidArgument,
                     "argument '%s' must be in the default (contiguous) dim order", t.name);
  return portable::check_has_data(t);
}

/// The checks the fused weight-quantized linears share, before their own
/// weight-layout checks: an `input_dtype` input, float32 scales, out and bias (when given), a
/// 2-D `weight` of `weight_dtype` (`weight_shape` says which layout), an
/// input with at least one dim. Sets *k (input's last dim) and *n (weight's
/// rows). Errors: kInvalidType / kInvalidArgument naming the argument.
inline Status check_quantized_linear(const NamedTensor& input, ScalarType input_dtype,
                                     const NamedTensor& weight, ScalarType weight_dtype,
                                     const char* weight_shape, const NamedTensor& scales,
                                     const NamedTensor& bias, const NamedTensor& out, int64_t* k,
                                     int64_t* n) {
  TL_RETURN_IF_ERROR(check_dtype(input, input_dtype));
  TL_RETURN_IF_ERROR(check_dtype(weight, weight_dtype));
  TL_RETURN_IF_ERROR(check_dtype(scales, ScalarType::kFloat));
  TL_RETURN_IF_ERROR(check_dtype(out, ScalarType::kFloat));
  if (bias.tensor.defined()) TL_RETURN_IF_ERROR(check_dtype(bias, ScalarType::kFloat));
  TL_RETURN_IF_ERROR(portable::check_rank(weight, 2, weight_shape));
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least one dimension (K)");
  *k = input.tensor.size(input.tensor.dim() - 1);
  *n = weight.tensor.size(0);
  return Error::kOk;
}

/// The run-time steps the fused linears share: resizes `out` to input's
/// shape with its last dim `n`, then checks every operand is contiguous (bias
/// when given). Errors: those of resize_tensor and check_contiguous.
inline Status resize_linear_out(const NamedTensor& input, const NamedTensor& weight,
                                const NamedTensor& scales, const NamedTensor& bias,
                                const NamedTensor& out, int64_t n) {
  const size_t dim = input.tensor.dim();
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d + 1 < dim; ++d) sizes[d] = input.tensor.size(d);
  sizes[dim - 1] = static_cast<SizesType>(n);
  TL_RETURN_IF_ERROR(portable::resize_tensor(out, {sizes, dim}));
  for (const NamedTensor* t : {&input, &weight, &scales, &out}) {
    TL_RETURN_IF_ERROR(check_contiguous(*t));
  }
  if (bias.tensor.defined()) return check_contiguous(bias);
  return Error::kOk;
}

/// Errors: kInvalidArgument when `bias` is given and has not `n` elements.
inline Status check_bias_length(const NamedTensor& bias, int64_t n) {
  if (bias.tensor.defined()) {
    TL_CHECK_OR_RETURN(bias.tensor.numel() == n, Error::kInvalidArgument,
                       "argument 'bias' has %lld elements, expected %lld (N)",
                       static_cast<long long>(bias.tensor.numel()), static_cast<long long>(n));
  }
  return Error::kOk;
}

/// The tensors of linear_8da4w / linear_4w, named as their schema names them.
struct PackedInt4LinearArgs {
  explicit PackedInt4LinearArgs(Span<EValue*> args)
      : input{args[0]->to_tensor(), "input"},
        weight{args[1]->to_tensor(), "weight"},
        scales{args[2]->to_tensor(), "weight_scales"},
        bias{args[4]->to_optional_tensor(), "bias"},
        out{args[5]->to_tensor(), "out"} {}
  NamedTensor input;
  NamedTensor weight;
  NamedTensor scales;
  NamedTensor bias;
  NamedTensor out;
};

/// The load-time checks linear_8da4w and linear_4w share: (input [..., K]
/// float32, weight uint8 [N, K / 2] packed int4, weight_scales [N, K / G],
/// int group_size even and dividing K, optional bias [N], out).
inline Status check_packed_int4_linear(Span<EValue*> args) {
  const auto [input, weight, scales, bias, out] = PackedInt4LinearArgs(args);
  int64_t k = 0, n = 0;
  TL_RETURN_IF_ERROR(check_quantized_linear(input, ScalarType::kFloat, weight, ScalarType::kByte,
                                            "a matrix [N, K / 2] of packed int4", scales, bias,
                                            out, &k, &n));
  TL_CHECK_OR_RETURN(weight.tensor.size(1) * 2 == k && k > 0, Error::kInvalidArgument,
                     "argument 'weight' has %d packed columns, expected %lld (K / 2, K = %lld)",
                     weight.tensor.size(1), static_cast<long long>(k / 2),
                     static_cast<long long>(k));
  const int64_t group = args[3]->to_int();
  TL_CHECK_OR_RETURN(group >= 2 && group % 2 == 0 && k % group == 0, Error::kInvalidArgument,
                     "argument 'group_size' is %lld, expected an even divisor of K = %lld",
                     static_cast<long long>(group), static_cast<long long>(k));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == n * (k / group), Error::kInvalidArgument,
                     "argument 'weight_scales' has %lld elements, expected %lld (N x K / "
                     "group_size)",
                     static_cast<long long>(scales.tensor.numel()),
                     static_cast<long long>(n * (k / group)));
  return check_bias_length(bias, n);
}

/// `raw_axis` (which may count from the end) as an index into `input`'s
/// dims. Errors: kInvalidArgument when it is out of range.
inline Status channel_axis(const NamedTensor& input, int64_t raw_axis, size_t* axis) {
  const int64_t dim = static_cast<int64_t>(input.tensor.dim());
  TL_CHECK_OR_RETURN(raw_axis >= -dim && raw_axis < dim, Error::kInvalidArgument,
                     "argument 'axis' is %lld, out of range for '%s' with %lld dimensions",
                     static_cast<long long>(raw_axis), input.name, static_cast<long long>(dim));
  *axis = static_cast<size_t>(raw_axis < 0 ? raw_axis + dim : raw_axis);
  return Error::kOk;
}

/// x rounded to T's precision (round to nearest even), as torch stores an
/// intermediate result of dtype T. The double holds T's exact operands'
/// result, so one rounding matches T's own arithmetic.
template <typename T>
double round_to(double x) {
  if constexpr (std::is_same_v<T, double>) {
    return x;
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(x);
  } else {
    return static_cast<float>(T(static_cast<float>(x)));
  }
}

/// The dtype of (int tensor) * (T tensor) etc.: float types win; reduced
/// float types compute in float and store T.
template <typename T>
using opmath_of = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Saturating clamp then conversion to Q, as torch's
/// clamp(round(v) + zero_point, quant_min, quant_max).to(Q) for a value `r`
/// already rounded and offset. NaN stays NaN through the clamp and converts
/// to 0, as torch's float-to-int conversion gives for 8/16-bit dtypes.
template <typename Q, typename F>
Q clamp_to_quant(F r, F quant_min, F quant_max) {
  r = r < quant_min ? quant_min : r;
  r = quant_max < r ? quant_max : r;
  return portable::convert<Q>(r);
}

}  // namespace torchlight::quantized
