// Shared pieces of the normalization kernels (batch norm, layer norm, group
// norm): ATen's dtype rule for the parameter tensors, the moments of a set
// of elements, and the two-type dispatch (input dtype, parameter dtype).
// Header-only.
//
// Moments are computed in double with two passes (mean, then squared
// deviations), which is at least as accurate as ATen's float Welford
// reduction; results agree with ATen to a few float32 ulps.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"

namespace torchlight::portable {

/// ATen's rule for normalization parameters (weight, bias, running stats):
/// the input is a float type; every parameter given (undefined tensors are
/// skipped) has the input's dtype, or all have float32 while the input is
/// float16 or bfloat16 ("mixed dtype"). Writes the parameters' dtype (the
/// input's when none is given) to *param_type: the dtype of the mean/rstd
/// outputs. Errors: kInvalidType naming the input or the first parameter
/// that breaks the rule.
inline Status check_norm_dtypes(const NamedTensor& input, Span<const NamedTensor> params,
                                ScalarType* param_type) {
  const ScalarType in = input.tensor.scalar_type();
  TL_CHECK_OR_RETURN(is_floating_point(in), Error::kInvalidType,
                     "argument '%s' has dtype %s, which is not supported (supported: %s)",
                     input.name, to_string(in), kFloatTypeNames);
  const NamedTensor* first = nullptr;
  for (const NamedTensor& p : params) {
    if (!p.tensor.defined()) continue;
    if (first == nullptr) {
      first = &p;
      const ScalarType t = p.tensor.scalar_type();
      const bool mixed_ok =
          t == ScalarType::kFloat && (in == ScalarType::kHalf || in == ScalarType::kBFloat16);
      TL_CHECK_OR_RETURN(t == in || mixed_ok, Error::kInvalidType,
                         "argument '%s' has dtype %s, expected %s (the dtype of '%s')%s", p.name,
                         to_string(t), to_string(in), input.name,
                         in == ScalarType::kHalf || in == ScalarType::kBFloat16
                             ? " or float32"
                             : "");
    } else {
      TL_CHECK_OR_RETURN(p.tensor.scalar_type() == first->tensor.scalar_type(),
                         Error::kInvalidType,
                         "argument '%s' has dtype %s, expected %s (the dtype of '%s'; parameters "
                         "share one dtype)",
                         p.name, to_string(p.tensor.scalar_type()),
                         to_string(first->tensor.scalar_type()), first->name);
    }
  }
  *param_type = first != nullptr ? first->tensor.scalar_type() : in;
  return Error::kOk;
}

/// Mean and biased variance of `count` elements data[offset(i)], in double.
/// An empty set gives mean 0 and variance NaN, as ATen's layer and group
/// norm do.
template <typename T, typename OffsetFn>
void compute_moments(const T* data, int64_t count, const OffsetFn& offset, double* mean,
                     double* variance) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += convert<double>(data[offset(i)]);
  const double m = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = convert<double>(data[offset(i)]) - m;
    squares += d * d;
  }
  *mean = m;
  *variance = squares / static_cast<double>(count);
}

/// 1 / sqrt(variance + eps), ATen's rstd (negative rounding noise clamped).
inline double inverse_std(double variance, double eps) {
  return 1.0 / std::sqrt((variance < 0 ? 0.0 : variance) + eps);
}

}  // namespace torchlight::portable

/// Runs the lambda (last argument) with T bound to the C++ type of the input
/// dtype `in` (a float type, checked by check_norm_dtypes) and P to that of
/// the parameters' dtype `param` (`in` itself, or float32). Fails `ctx`
/// otherwise, like TL_SWITCH_FLOAT_TYPES.
#define TL_SWITCH_NORM_TYPES(in, param, ctx, T, P, ...)                        \
  TL_SWITCH_FLOAT_TYPES(in, ctx, "input", T, [&] {                            \
    if ((param) == (in)) {                                                    \
      using P [[maybe_unused]] = T;                                           \
      (__VA_ARGS__)();                                                        \
    } else {                                                                  \
      using P [[maybe_unused]] = float;                                       \
      (__VA_ARGS__)();                                                        \
    }                                                                         \
  })
