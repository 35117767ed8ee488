// The two conversions linear_8da4w's prefill (the dequantized GEMM,
// dequantized_gemm.h) runs before the fp32 GEMM, per instruction set:
//  - weight rows: (nibble - 8) * group scale, element 2j from byte j's high
//    nibble and 2j + 1 from its low one;
//  - activation rows: quantized per token as quantize_token_int8 does
//    (per_token_qparams.h), then dequantized, (q - zero_point) * scale.
// Each value is one exact int-to-float conversion and one float multiply,
// so every instruction set gives the same floats (tested). The AVX2 forms
// were 8-10x faster than the scalar loops, which were a third of a
// stories15m 8da4w prefill's linear time (bench/quantized BM_shape_8da4w).
#pragma once

#include <cstdint>

namespace torchlight::quantized {

struct Int4Weights {
  const uint8_t* packed;  // [N, K / 2], high nibble first, each value + 8.
  const float* scales;    // [N, K / group]
  int64_t k;
  int64_t group;          // Even, divides K.
};

/// Weight rows [n_begin, n_end) of `weights` (an Int4Weights) into out
/// [n_end - n_begin, K]; the signature of DequantizeWeightRowsFn.
void dequantize_int4_rows_generic(const void* weights, int64_t n_begin, int64_t n_end, float* out);
/// One token x [K] quantized with (scale, zero_point) and dequantized into out.
void quantize_dequantize_token_generic(const float* x, int64_t k, double scale,
                                       int64_t zero_point, float* out);
#if defined(__x86_64__) || defined(_M_X64)
/// Needs group % 32 == 0.
void dequantize_int4_rows_avx2(const void* weights, int64_t n_begin, int64_t n_end, float* out);
void quantize_dequantize_token_avx2(const float* x, int64_t k, double scale, int64_t zero_point,
                                    float* out);
/// AVX-512 F (as the AVX2 forms, in 512-bit vectors); the weights need group % 32 == 0.
void dequantize_int4_rows_avx512(const void* weights, int64_t n_begin, int64_t n_end, float* out);
void quantize_dequantize_token_avx512(const float* x, int64_t k, double scale, int64_t zero_point,
                                      float* out);
#endif

using DequantizeInt4RowsFn = void (*)(const void*, int64_t, int64_t, float*);
using QuantizeDequantizeTokenFn = void (*)(const float*, int64_t, double, int64_t, float*);

/// The best form this CPU runs and quant_isa() allows (AVX-512 from
/// QuantIsa::kAvx512Vnni up; the weights' x86 forms need group % 32 == 0).
DequantizeInt4RowsFn select_dequantize_int4_rows(int64_t group);
QuantizeDequantizeTokenFn select_quantize_dequantize_token();

}  // namespace torchlight::quantized
