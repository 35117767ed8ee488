// linear_8da4w's activation rows (linear_8da4w.h): each row quantized per
// token with its scale and zero point (token_qparams and quantize_token_int8,
// per_token_qparams.h), put in arranged order a chunk of 32 at a time (the
// odd elements, then the even ones) with each group's correction. Decode
// does this once per linear call for one row, ahead of a loop of a few
// microseconds, so it is written twice: portable (the op's original steps)
// and AVX-512 (eight float64 lanes a step; the same operations per value,
// so the same bytes and corrections, tested).
#pragma once

#include <cstdint>

#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

/// x [K] into arranged [K] and correction [K / group] (group even, K a
/// multiple of it).
void quantize_arranged_8da4w(const float* x, int64_t k, int64_t group, double scale,
                             int32_t zero_point, int8_t* arranged, float* correction);
#if defined(__x86_64__) || defined(_M_X64)
/// The same bytes and floats with AVX-512 F/BW/VL (group % 32 == 0).
void quantize_arranged_8da4w_avx512(const float* x, int64_t k, int64_t group, double scale,
                                    int32_t zero_point, int8_t* arranged, float* correction);
#endif

using QuantizeArranged8da4wFn = void (*)(const float*, int64_t, int64_t, double, int32_t, int8_t*,
                                         float*);
/// AVX-512 where `isa` is AVX-512 VNNI or above and group % 32 == 0, else portable.
QuantizeArranged8da4wFn select_quantize_arranged_8da4w(int64_t group, QuantIsa isa = quant_isa());

/// The row's range ahead of its parameters (token_qparams_from_range):
/// row_range<float> (portable, four lanes), or sixteen lanes with AVX-512;
/// the same range, as a minimum's order does not matter (RowRange).
RowRange row_range_f32(const float* x, int64_t n);
#if defined(__x86_64__) || defined(_M_X64)
RowRange row_range_f32_avx512(const float* x, int64_t n);
#endif
using RowRangeF32Fn = RowRange (*)(const float*, int64_t);
/// AVX-512 where `isa` is AVX-512 VNNI or above, else portable.
RowRangeF32Fn select_row_range_f32(QuantIsa isa = quant_isa());

}  // namespace torchlight::quantized
