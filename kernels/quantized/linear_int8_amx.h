// linear_int8's prefill on AMX-BF16 tiles (tdpbf16ps) without quantizing
// the activations. Each int8 weight is exact in bf16 (|w| <= 128: at most
// 8 significant bits). Each float32 activation is split into three bf16
// values, x = hi + mid + lo exactly (hi = x's top 16 bits, mid = the top
// 16 bits of x - hi, lo = the rest, which has at most 8 significant bits),
// so every bf16 x bf16 product is exact in fp32 and the tile's fp32
// accumulator sums the 3K products of sum_k x_k w_k; out = fma(sum,
// scale[n], bias[n]) as the other loops do. The rounding is that of an fp32
// sum of 3K terms instead of K (tested in linear_int8_amx_test.cpp: within
// 2e-6 of |scale| sum_k |x_k w_k| + |bias| of float64, which two parts fail).
//
// Denormals: tdpbf16ps treats denormal inputs as zero and flushes denormal
// results, so activation parts below 2^-126 (x's mid and lo once |x| is
// below about 2^-110, all of a denormal x) are dropped: an absolute error
// of at most 3 * 2^-126 * sum_k |w_k| before the scale. Non-finite rows are
// not split (inf - inf is NaN): the kernel reports them and the caller runs
// the AVX-512 loop instead.
//
// Layout: the activation parts are the A operand (16 rows of 32 bf16 of
// K), row-major in scratch; the weights the B operand, converted per call
// and block of 16 columns into a thread's panel: K / 2 rows of 16 columns x
// one dword (the bf16 of w[n, 2i] and w[n, 2i + 1]). K is padded with
// zeros to a multiple of 32, rows to 16 and columns to 16.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::quantized {

#if defined(__x86_64__) || defined(_M_X64)
/// Whether this CPU runs the kernel: AMX granted (QuantIsa::kAmx), AMX-BF16
/// and AVX512-BF16 (the weights' convert).
bool cpu_has_amx_bf16();

/// K rounded up to whole tiles of 32.
inline int64_t amx_padded_k_int8(int64_t k) { return (k + 31) / 32 * 32; }

/// Bytes of the split activations of `rows` rows (three parts, rows padded to 16).
size_t split_rows_int8_amx_bytes(int64_t rows, int64_t k);

/// Splits rows [0, rows) of x [rows, K] into `split` (split_rows_int8_amx_bytes,
/// 64-byte aligned); the padding rows and K are zeros. False (split
/// unusable) when some value is inf or NaN.
bool split_rows_int8_amx(const float* x, int64_t rows, int64_t k, void* split);

/// Rows of x are split in blocks of 16 (the last block's padding rows
/// zeroed); split_rows_int8_amx for blocks [block_begin, block_end) only, so
/// threads can share the split. False when a value there is inf or NaN.
bool split_row_range_int8_amx(const float* x, int64_t rows, int64_t k, void* split,
                              int64_t block_begin, int64_t block_end);

/// Bytes of one thread's weight panel (two blocks of 16 columns).
size_t linear_int8_amx_panel_bytes(int64_t k);

struct RowsInt8Amx {
  const void* split;     // split_rows_int8_amx of the rows.
  int64_t rows;
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null.
  int64_t k;
  int64_t n;             // Columns of out (its row stride).
  float* out;            // [rows, N]
};

/// Columns [n_begin, n_end) of every row; `panel` is
/// linear_int8_amx_panel_bytes of 64-byte aligned scratch owned by the
/// calling thread. Only where cpu_has_amx_bf16().
void linear_int8_amx_columns(const RowsInt8Amx& rows, void* panel, int64_t n_begin, int64_t n_end);
#endif

}  // namespace torchlight::quantized
