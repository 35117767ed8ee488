// The fused pointwise loops of torchlight::silu, rms_norm, swiglu and add_rms_norm,
// compiled once per instruction set (pointwise_{generic,avx2,avx512}.cpp
// from pointwise_impl.h) and chosen at run time by CPU detection. Those
// differently flagged files include this header, so it holds declarations
// and plain data only (an inline function here could be emitted with
// AVX-512 instructions and shared with code that runs on any CPU).
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::llm {

/// y[i] = x[i] * sigmoid(x[i]) for i < n (y may be x). Within 3 ulp of
/// the float64 result; sigmoid's subnormal results for x < -87 included.
using SiluFn = void (*)(const float* x, float* y, int64_t n);

/// y[i] = silu(gate[i]) * up[i] for i < n, silu as SiluFn computes it
/// (rounded before the product), so equal bit for bit to a SiluFn call on
/// gate then a float multiply (y may be gate or up).
using SiluMulFn = void (*)(const float* gate, const float* up, float* y, int64_t n);

/// For each of `rows` rows of `dim` floats (row r at x + r * x_stride, out
/// at y + r * y_stride, y may be x):
/// y = x * (1 / sqrt(sum(x^2) / dim + eps)) * weight.
using RmsNormFn = void (*)(const float* x, int64_t x_stride, const float* weight, float* y,
                           int64_t y_stride, int64_t rows, int64_t dim, float eps);

/// For each of `rows` dense rows of `dim` floats: sum = x + residual, then
/// y = sum's RmsNormFn result, equal bit for bit to a float add then a
/// RmsNormFn call on the sum. sum and y may be x or residual (each row is
/// read before it is written), but not overlap them otherwise.
using AddRmsNormFn = void (*)(const float* x, const float* residual, const float* weight,
                              float* sum, float* y, int64_t rows, int64_t dim, float eps);

/// One build of the loops.
struct PointwiseVariant {
  const char* name;  // "avx512", "avx2" or "generic"; static storage.
  SiluFn silu;
  RmsNormFn rms_norm;
  SiluMulFn silu_mul;
  AddRmsNormFn add_rms_norm;
};

/// The builds this binary holds that this CPU runs, fastest first ("generic"
/// is last, always there); *count receives how many. Detected once; static.
const PointwiseVariant* pointwise_variants(size_t* count);

/// The fastest build this CPU runs.
const PointwiseVariant& best_pointwise_variant();

void silu_generic(const float* x, float* y, int64_t n);
void silu_mul_generic(const float* gate, const float* up, float* y, int64_t n);
void add_rms_norm_generic(const float* x, const float* residual, const float* weight, float* sum,
                        float* y, int64_t rows, int64_t dim, float eps);
void rms_norm_generic(const float* x, int64_t x_stride, const float* weight, float* y,
                      int64_t y_stride, int64_t rows, int64_t dim, float eps);
#if defined(__x86_64__)
void silu_avx2(const float* x, float* y, int64_t n);
void silu_mul_avx2(const float* gate, const float* up, float* y, int64_t n);
void add_rms_norm_avx2(const float* x, const float* residual, const float* weight, float* sum,
                        float* y, int64_t rows, int64_t dim, float eps);
void rms_norm_avx2(const float* x, int64_t x_stride, const float* weight, float* y,
                   int64_t y_stride, int64_t rows, int64_t dim, float eps);
void silu_avx512(const float* x, float* y, int64_t n);
void silu_mul_avx512(const float* gate, const float* up, float* y, int64_t n);
void add_rms_norm_avx512(const float* x, const float* residual, const float* weight, float* sum,
                        float* y, int64_t rows, int64_t dim, float eps);
void rms_norm_avx512(const float* x, int64_t x_stride, const float* weight, float* y,
                     int64_t y_stride, int64_t rows, int64_t dim, float eps);
#endif

}  // namespace torchlight::llm
