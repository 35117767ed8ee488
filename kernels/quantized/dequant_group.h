// Group-wise dequantization of rows (dequantize_per_channel_group and the
// quantized embeddings): row r of a [rows, cols] integer matrix has
// cols / group_size groups, each with one scale and an optional zero point,
// and becomes ((q - zp) * scale).to(Out) with torch's rounding:
//   zero point of an integer dtype (or none): q - zp exact, * scale in S;
//   zero point of the scales' dtype S: q - zp rounded to S, * scale in S;
// then rounded to Out. S is float32, float16, bfloat16 or float64.
#pragma once

#include <cstdint>

#include "kernels/quantized/quant_common.h"

namespace torchlight::quantized {

/// Scale dtypes of group-wise parameters.
template <typename Fn>
bool visit_group_scale_type(ScalarType t, Fn&& fn) {
  return visit_float_result(t, fn);
}

/// scales: a float dtype; zero_points: none, an integer dtype or the dtype
/// of scales. Errors: kInvalidType naming the argument.
inline Status check_group_param_dtypes(const NamedTensor& scales, const NamedTensor& zero_points) {
  TL_CHECK_OR_RETURN(visit_group_scale_type(scales.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument '%s' has dtype %s, expected %s", scales.name,
                     to_string(scales.tensor.scalar_type()), kFloatResultNames);
  if (zero_points.tensor.defined()) {
    const ScalarType z = zero_points.tensor.scalar_type();
    TL_CHECK_OR_RETURN(is_zero_point_dtype(z) || z == scales.tensor.scalar_type(),
                       Error::kInvalidType,
                       "argument '%s' has dtype %s, expected an integer dtype or %s (the dtype "
                       "of '%s')",
                       zero_points.name, to_string(z), to_string(scales.tensor.scalar_type()),
                       scales.name);
  }
  return Error::kOk;
}

/// rows * groups parameters each. Errors: kInvalidArgument naming the argument.
inline Status check_group_param_shapes(const NamedTensor& scales, const NamedTensor& zero_points,
                                       int64_t rows, int64_t groups) {
  TL_CHECK_OR_RETURN(scales.tensor.numel() == rows * groups, Error::kInvalidArgument,
                     "argument '%s' has %lld elements, expected %lld (%lld rows x %lld groups)",
                     scales.name, static_cast<long long>(scales.tensor.numel()),
                     static_cast<long long>(rows * groups), static_cast<long long>(rows),
                     static_cast<long long>(groups));
  TL_RETURN_IF_ERROR(check_contiguous(scales));
  if (zero_points.tensor.defined()) {
    TL_CHECK_OR_RETURN(zero_points.tensor.numel() == rows * groups, Error::kInvalidArgument,
                       "argument '%s' has %lld elements, expected %lld (%lld rows x %lld groups)",
                       zero_points.name, static_cast<long long>(zero_points.tensor.numel()),
                       static_cast<long long>(rows * groups), static_cast<long long>(rows),
                       static_cast<long long>(groups));
    TL_RETURN_IF_ERROR(check_contiguous(zero_points));
  }
  return Error::kOk;
}

namespace internal {

// One parameter as double (integer or float dtypes).
inline double load_param(const Tensor& t, int64_t i) {
  switch (t.scalar_type()) {
    case ScalarType::kFloat: return t.const_data_ptr<float>()[i];
    case ScalarType::kDouble: return t.const_data_ptr<double>()[i];
    case ScalarType::kHalf: return static_cast<float>(t.const_data_ptr<Half>()[i]);
    case ScalarType::kBFloat16: return static_cast<float>(t.const_data_ptr<BFloat16>()[i]);
    default: return static_cast<double>(load_int(t, i));
  }
}

}  // namespace internal

/// Writes out row i (of out_rows, each `cols` wide) from source row
/// source_row(i), whose element c is value(source_row(i), c) (an int).
/// Returns false when a dtype is unsupported (nothing written). The caller
/// has checked shapes and that source rows are in range.
template <typename ValueFn, typename RowFn>
bool dequantize_group_rows(ValueFn&& value, const Tensor& scales, const Tensor& zero_points,
                           int64_t group_size, int64_t out_rows, int64_t cols, RowFn&& source_row,
                           const Tensor& out) {
  const int64_t groups = cols / group_size;
  const bool float_zp = zero_points.defined() && !is_zero_point_dtype(zero_points.scalar_type());
  bool done = false;
  visit_group_scale_type(scales.scalar_type(), [&](auto s_tag) {
    visit_float_result(out.scalar_type(), [&](auto out_tag) {
      using S = typename decltype(s_tag)::type;
      using Out = typename decltype(out_tag)::type;
      Out* y = out.mutable_data_ptr<Out>();
      for (int64_t i = 0; i < out_rows; ++i) {
        const int64_t row = source_row(i);
        Out* dst = y + i * cols;
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t p = row * groups + g;
          const double s = internal::load_param(scales, p);
          const double zp = zero_points.defined() ? internal::load_param(zero_points, p) : 0.0;
          const int64_t c0 = g * group_size;
          if constexpr (std::is_same_v<S, float> && std::is_same_v<Out, float>) {
            // float32 throughout: (float(q) - zp) * s is exactly torch's two
            // float32 steps whatever the zero point's dtype.
            const float sf = static_cast<float>(s);
            const float zf = static_cast<float>(zp);
            for (int64_t c = 0; c < group_size; ++c) {
              dst[c0 + c] = (static_cast<float>(value(row, c0 + c)) - zf) * sf;
            }
          } else {
            for (int64_t c = 0; c < group_size; ++c) {
              const double q = value(row, c0 + c);
              const double t = float_zp ? round_to<S>(q - zp) : q - zp;
              const double r = round_to<S>(t * s);
              dst[c0 + c] = static_cast<Out>(static_cast<opmath_of<Out>>(round_to<Out>(r)));
            }
          }
        }
      }
      done = true;
    });
  });
  return done;
}

}  // namespace torchlight::quantized
