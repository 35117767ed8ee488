// Prefill (many rows) for the fused quantized linears: the weight is
// dequantized a panel of columns at a time into scratch and multiplied by
// the fp32 GEMM (kernels/optimized/gemm), so the quantized linears run at
// the float GEMM's speed once a call has enough rows to pay for converting
// each weight once.
//
// Why not an int8 x int8 tile: on AVX2 without VNNI, maddubs + madd give 32
// multiply-adds in two instructions on the same ports as two FMAs (16), and
// group-wise weights add a convert and a scaled add per 32 values per row
// and column; measured, the dequantized float GEMM was faster. The result is
// the decomposed graph's own arithmetic (dequantize, then linear), so only
// the summation order differs from it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/status.h"

namespace torchlight::quantized {

/// Calls with at least this many rows take the dequantized GEMM (measured,
/// bench/quantized: with fewer, converting every weight costs more than the
/// rows win; the NT GEMM also works in panels of 16 rows).
inline constexpr int64_t kMinRowsDequantizedGemm = 64;
/// 8da4w takes it only for groups up to this size: its own loop pays a
/// convert and a scaled add per group, which larger groups amortise (group
/// 128 at 2048 x 2048: the loop was as fast or faster; 32 and 64: 10-25%
/// slower than the GEMM).
inline constexpr int64_t kMaxGroupDequantizedGemm = 64;

/// Writes weight rows [n_begin, n_end) as floats: out [n_end - n_begin, K].
using DequantizeWeightRowsFn = void (*)(const void* weights, int64_t n_begin, int64_t n_end,
                                        float* out);

/// Scratch of the dequantized GEMM: gemm's packing slots, one weight panel,
/// and `activation_floats` floats for the caller (8da4w's dequantized rows).
struct DequantizedGemmScratch {
  optimized::GemmWorkspace workspace;
  float* panel = nullptr;
  int64_t panel_columns = 0;
  float* activations = nullptr;
};

/// Bytes of that scratch for a [N, K] weight with `threads` threads.
size_t dequantized_gemm_scratch_bytes(int64_t k, int64_t n, int64_t activation_floats,
                                      size_t threads);

/// Splits `bytes` of 64-byte aligned `memory`; false when they are too few.
bool carve_dequantized_gemm_scratch(void* memory, size_t bytes, int64_t k, int64_t n,
                                    int64_t activation_floats, DequantizedGemmScratch* out);

struct DequantizedGemm {
  const float* x = nullptr;     // [rows, K]
  int64_t rows = 0;
  int64_t k = 0;
  int64_t n = 0;
  const float* bias = nullptr;  // [N] or null.
  float* out = nullptr;         // [rows, N]
  DequantizeWeightRowsFn dequantize = nullptr;
  const void* weights = nullptr;
};

/// out = x @ dequantize(weight)^T (+ bias), a panel of columns at a time;
/// each thread dequantizes its share of the panel's columns and multiplies
/// them (a one-thread GEMM), so the floats it wrote stay in its cache.
Status run_dequantized_gemm(const DequantizedGemm& problem, const DequantizedGemmScratch& scratch);

}  // namespace torchlight::quantized
