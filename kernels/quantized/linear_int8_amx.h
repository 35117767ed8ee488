// linear_int8's prefill on AMX-INT8 tiles (tdpbssd) with the activations
// split into three signed int8 digits per value and a power-of-two scale
// per row (int8_digit_split.h): x_rk ~= 2^e_r (d0 + d1 / 256 + d2 / 65536).
// The int8 weights are used as stored (only laid out for the B operand),
// so A_p = sum_k d_pk w_nk is exact in int32 for each digit p, and the
// three are combined in float32 at the tile store as
// combine_int8_digit_sums does (the same operations, the same floats):
// sum = 2^(e_r - 16) (65536 A0 + (256 A1 + A2)); out = fma(sum, scale[n],
// bias[n]) as the other loops do.
//
// Error against the exact float64 result (tested in linear_int8_amx_test.cpp),
// with m_r = max_k |x_rk|, W_n = sum_k |w_nk|, X_rn = sum_k |x_rk w_nk|:
//   |out - exact| <= |scale_n| (m_r W_n / (127 * 2^16)      the split
//                     + 2^-23 (X_rn + m_r W_n / 64) + 2^-149) the combine
//                   + 2^-24 |out| + 2^-149                   the final fma
// i.e. about 2^-22 m_r W_n |scale_n|: far tighter than quantizing the
// activations to 8 bits (upstream ExecuTorch's 8da paths, llama.cpp's
// q8_0), though looser than the float loops' 2^-24-ish per term where a
// row mixes very large and very small values. Two digits (dropping d2)
// would be off by up to 2^-9 m_r W_n / 63.5 and fail it (tested).
//
// Denormals: split and summed like any value (no flush: the split is
// integer arithmetic and the combine's scalef rounds a denormal result
// once, the 2^-149 above). Non-finite rows are not split: the kernel
// reports them and the caller runs the float loops instead. K is at most
// kMaxKInt8Amx: |d| <= 128 and |w| <= 128 keep each A_p within int32.
//
// Layout: the digits are the A operand (16 rows of 64 bytes of K per tile,
// each digit a plane of rows at an odd number of 64-byte lines); the
// weights the B operand, laid out per call and block of 16 columns (8
// blocks at a time) into a thread's panels: K / 4 rows of 16 columns x 4 bytes of K (a 16 x 16 dword
// transpose per 64 values of K). K is padded with zeros to a multiple of
// 64, rows to 16 and columns to 16.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::quantized {

#if defined(__x86_64__) || defined(_M_X64)
/// The largest K the int32 sums hold: 128 * 128 * K < 2^31.
inline constexpr int64_t kMaxKInt8Amx = 131071;

/// Whether this CPU runs the kernel (QuantIsa::kAmx: AMX-INT8 granted, and
/// AVX-512 F/BW/VL/VNNI).
bool cpu_runs_linear_int8_amx();

/// Bytes of the split activations of `rows` rows (three digit planes, rows
/// padded to 16, and the rows' exponents).
size_t split_rows_int8_amx_bytes(int64_t rows, int64_t k);

/// Splits rows [0, rows) of x [rows, K] into `split`
/// (split_rows_int8_amx_bytes, 64-byte aligned); the padding rows and K are
/// zeros. False (split unusable) when some value is inf or NaN.
bool split_rows_int8_amx(const float* x, int64_t rows, int64_t k, void* split);

/// Rows of x are split in blocks of 16 (the last block's padding rows
/// zeroed); split_rows_int8_amx for blocks [block_begin, block_end) only, so
/// threads can share the split. False when a value there is inf or NaN.
bool split_row_range_int8_amx(const float* x, int64_t rows, int64_t k, void* split,
                              int64_t block_begin, int64_t block_end);

/// Bytes of one thread's weight panels (a group of 8 blocks of 16 columns).
size_t linear_int8_amx_panel_bytes(int64_t k);

struct RowsInt8Amx {
  const void* split;     // split_rows_int8_amx of the rows.
  int64_t rows;
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null.
  int64_t k;             // At most kMaxKInt8Amx.
  int64_t n;             // Columns of out (its row stride).
  float* out;            // [rows, N]
};

/// Columns [n_begin, n_end) of every row; `panel` is
/// linear_int8_amx_panel_bytes of 64-byte aligned scratch owned by the
/// calling thread. Only where cpu_runs_linear_int8_amx().
void linear_int8_amx_columns(const RowsInt8Amx& rows, void* panel, int64_t n_begin, int64_t n_end);

/// The same in two steps, so a thread can lay out weights once and multiply
/// several parts of the rows by them: linear_int8_amx_layout writes columns
/// [n_begin, n_end) (n_begin a multiple of 16) into `panels`
/// (linear_int8_amx_layout_bytes(K, n_end - n_begin), 64-byte aligned), and
/// linear_int8_amx_multiply computes those columns of every row from them,
/// inside an Int8AmxTileScope (the tile configuration it needs).
size_t linear_int8_amx_layout_bytes(int64_t k, int64_t n);
void linear_int8_amx_layout(const RowsInt8Amx& rows, void* panels, int64_t n_begin, int64_t n_end);
void linear_int8_amx_multiply(const RowsInt8Amx& rows, const void* panels, int64_t n_begin, int64_t n_end);

/// While alive, the calling thread's tiles are configured for
/// linear_int8_amx_multiply (released after).
class Int8AmxTileScope {
 public:
  Int8AmxTileScope();
  ~Int8AmxTileScope();
  Int8AmxTileScope(const Int8AmxTileScope&) = delete;
  Int8AmxTileScope& operator=(const Int8AmxTileScope&) = delete;
};

/// For tests: the digit planes of a split (int8_digit_split.h's layout),
/// e.g. to zero d2 and see the error bound fail.
int8_t* split_int8_amx_digit_plane(void* split, int64_t rows, int64_t k, int digit);
/// Bytes from one row of a plane to the next, and rows in a plane.
int64_t split_int8_amx_row_bytes(int64_t k);
#endif

}  // namespace torchlight::quantized
