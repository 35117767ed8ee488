// linear_8da4w's prefill on AMX-INT8 tiles (linear_8da4w_amx.cpp,
// QuantIsa::kAmx): the activations quantized per token exactly as the
// loops quantize them (quantize_token_int8), the int4 weights unpacked to
// signed int8 (nibble - 8) once per call, a panel of 16 columns at a time,
// and `tdpbssd` summing each group exactly in int32; per group the sums are
// converted and scaled by the group's weight scale into fp32, and the zero
// point comes off once per column with the folded weight sums:
//   out[r, n] = bias[n] + x_scale[r] * (sum_g s[n, g] * sum_{k in g} xq w
//                                       - zp[r] * sum_g s[n, g] * sum_{k in g} w).
// The integer sums are exact; the float steps differ from the VNNI loops'
// (another order), so the two agree to float rounding (tested at 1e-4 of
// the output's magnitude, and against the decomposed graph).
//
// Layout: the weight panel is the tiles' B operand, K / 4 rows of 16
// columns x 4 bytes; packed dword j of a column (elements 8j..8j+7, two a
// byte, the high nibble first) gives panel row 2j its high nibbles
// (elements 8j, 8j+2, 8j+4, 8j+6) and row 2j + 1 its low nibbles (8j+1,
// ..., 8j+7), so a 16 x 16 dword transpose and two masks make the panel.
// The activations (the A operand, read in place, one row per tile row)
// are stored in the same order: in each block of 8, the even elements,
// then the odd ones (quantize_row_8da4w_amx).
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::quantized {

/// Rows of an AMX tile; the activations are padded with zero rows to a multiple.
inline constexpr int64_t kAmxTileRows8da4w = 16;

/// The activations' row stride for K: K rounded up to a whole number of
/// 64-byte lines, made odd (a tile's 16 rows then fall in 16 different L1
/// sets; at a power-of-two stride such as K = 2048 they shared two and the
/// tiles ran at a third of the speed).
inline int64_t amx_row_stride_8da4w(int64_t k) {
  const int64_t lines = (k + 63) / 64;
  return (lines % 2 == 0 ? lines + 1 : lines) * 64;
}

struct Rows8da4wAmx {
  const int8_t* xq;           // [rows rounded up to 16, stride], quantize_row_8da4w_amx's order.
  int64_t stride;             // amx_row_stride_8da4w(K); the bytes past K unread.
  const int32_t* zero_point;  // [rows]
  const float* scale;         // [rows] (float32 of the float64 qparam)
  int64_t rows;
  const uint8_t* weight;      // [N, K / 2] packed as linear_8da4w.h says.
  const float* w_scales;      // [N, K / group]
  const float* bias;          // [N] or null.
  int64_t k;
  int64_t n;                  // Columns of out (its row stride).
  int64_t group;              // A multiple of 32 dividing K.
  float* out;                 // [rows, N]
};

#if defined(__x86_64__) || defined(_M_X64)
/// Bytes of one thread's weight panels (two blocks of 16 columns).
size_t linear_8da4w_amx_panel_bytes(int64_t k, int64_t group);

/// token_qparams<float> of one token x [K] (the same scale and zero point),
/// its scan in 512-bit vectors: the prefill's rows are scanned once per
/// linear (stories15m: 1.9M values a prompt of 128).
void token_qparams_8da4w_amx(const float* x, int64_t k, double* scale, int64_t* zero_point);

/// One token x [K] quantized as quantize_token_int8 does (the same bytes),
/// stored in the tiles' order (header comment). K % 32 == 0.
void quantize_row_8da4w_amx(const float* x, int64_t k, double scale, int64_t zero_point,
                            int8_t* out);

/// Rows x [rows, K] quantized per token: each row's token_qparams_8da4w_amx
/// (zero point and float32 scale kept) and quantize_row_8da4w_amx into xq
/// at row stride `stride`. K % 32 == 0.
void quantize_rows_8da4w_amx(const float* x, int64_t rows, int64_t k, int64_t stride, int8_t* xq,
                             int32_t* zero_points, float* row_scales);

/// Columns [n_begin, n_end) of every row; n_begin a multiple of 16.
/// `panel` is linear_8da4w_amx_panel_bytes of 64-byte aligned scratch owned
/// by the calling thread. Only where cpu_has_quant_isa(QuantIsa::kAmx).
void linear_8da4w_amx_columns(const Rows8da4wAmx& rows, void* panel, int64_t n_begin,
                              int64_t n_end);
#endif

}  // namespace torchlight::quantized
