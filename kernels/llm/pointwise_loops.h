// The fused pointwise loops of torchlight::silu and torchlight::rms_norm,
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

/// For each of `rows` rows of `dim` floats (row r at x + r * x_stride, out
/// at y + r * y_stride, y may be x):
/// y = x * (1 / sqrt(sum(x^2) / dim + eps)) * weight.
using RmsNormFn = void (*)(const float* x, int64_t x_stride, const float* weight, float* y,
                           int64_t y_stride, int64_t rows, int64_t dim, float eps);

/// One build of the loops.
struct PointwiseVariant {
  const char* name;  // "avx512", "avx2" or "generic"; static storage.
  SiluFn silu;
  RmsNormFn rms_norm;
};

/// The builds this binary holds that this CPU runs, fastest first ("generic"
/// is last, always there); *count receives how many. Detected once; static.
const PointwiseVariant* pointwise_variants(size_t* count);

/// The fastest build this CPU runs.
const PointwiseVariant& best_pointwise_variant();

void silu_generic(const float* x, float* y, int64_t n);
void rms_norm_generic(const float* x, int64_t x_stride, const float* weight, float* y,
                      int64_t y_stride, int64_t rows, int64_t dim, float eps);
#if defined(__x86_64__)
void silu_avx2(const float* x, float* y, int64_t n);
void rms_norm_avx2(const float* x, int64_t x_stride, const float* weight, float* y,
                   int64_t y_stride, int64_t rows, int64_t dim, float eps);
void silu_avx512(const float* x, float* y, int64_t n);
void rms_norm_avx512(const float* x, int64_t x_stride, const float* weight, float* y,
                     int64_t y_stride, int64_t rows, int64_t dim, float eps);
#endif

}  // namespace torchlight::llm
