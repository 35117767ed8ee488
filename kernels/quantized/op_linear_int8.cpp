// torchlight::linear_int8.out(Tensor input, Tensor weight, Tensor weight_scales,
//     Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)
//
// The fused form of the int8 weight-only linear,
// linear(x, dequantize_per_channel(weight, scales, zeros, axis 0)): input
// float32 [..., K], weight int8 [N, K], weight_scales float32 [N] (symmetric,
// zero points 0), bias float32 [N] or none, out float32 [..., N]. Each
// weight byte is converted to float where it is used, never dequantized as a
// whole; out = bias + scale[n] * (x . w[n]). The result differs from the
// decomposed graph by float rounding only (the scale is applied after the
// sum instead of to each weight). Columns are split over the thread pool
// once per call; each chunk of columns serves every row in blocks of four
// (each weight vector loaded serves the block);
// the inner loop is AVX2 + FMA where the CPU has it (linear_int8.h).
// Prefill (at least kMinRowsDequantizedGemm rows) instead dequantizes the weight
// (w * scale, as the decomposed graph does) a panel at a time into scratch
// and runs the fp32 GEMM on it (dequantized_gemm.h). With AMX
// (QuantIsa::kAmx), calls of kMinRowsInt8Amx rows or more run ahead of both
// on AMX-INT8 tiles with the activations split into three int8 digits and a
// power-of-two scale per row (linear_int8_amx.h: error about 2^-22 of
// max|x| sum|w| |scale|); TORCHLIGHT_QUANT_ISA=avx512vnni turns that off.
// Prefill-sized passes there split their rows over the threads in one
// parallel_for: in chunks of 16 rows where every column's laid-out weights
// fit 512 KB (each thread lays them out once), else one part per thread;
// shorter passes split the rows' digits, then the columns.
// Decode (one row) on AVX-512 VNNI or AVX-VNNI splits the row into three int8 digits
// and sums them exactly against the int8 weights (linear_int8_vnni.h:
// error within about 2^-23 max|x| sum|w| |scale|); on AVX2 without VNNI
// into two int16 digits, summed exactly with vpmaddwd instead of converting
// every weight to float (linear_int8_int16_digits.h: error within about
// 2^-29 max|x| sum|w| |scale|; K up to 65536; in decode its weights stream
// from memory, so it prefetches each four columns' block in address order);
// rows with inf or NaN, and other CPUs, take the float loop.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/chunk_slots.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/linear_int8_amx.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_int16_digits.h"
#include "kernels/quantized/linear_int8_vnni.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/quantized/weight_only_gemm.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

Status check_static(Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[3]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  int64_t k = 0, n = 0;
  TL_RETURN_IF_ERROR(check_quantized_linear(input, ScalarType::kFloat, weight, ScalarType::kChar,
                                            "a matrix [N, K] of int8", scales, bias, out, &k, &n));
  TL_CHECK_OR_RETURN(weight.tensor.size(1) == k && k > 0, Error::kInvalidArgument,
                     "argument 'weight' has %d columns, expected K = %lld (input's last dim)",
                     weight.tensor.size(1), static_cast<long long>(k));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == n, Error::kInvalidArgument,
                     "argument 'weight_scales' has %lld elements, expected %lld (N)",
                     static_cast<long long>(scales.tensor.numel()), static_cast<long long>(n));
  return check_bias_length(bias, n);
}

struct Int8Weights {
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  int64_t k;
};

// Rows [n_begin, n_end) of weight * scale.
void dequantize_int8_rows(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  const Int8Weights& w = *static_cast<const Int8Weights*>(weights);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* row = w.weight + n * w.k;
    const float scale = w.scales[n];
    float* dst = out + (n - n_begin) * w.k;
    for (int64_t i = 0; i < w.k; ++i) dst[i] = static_cast<float>(row[i]) * scale;
  }
}

#if defined(__x86_64__) || defined(_M_X64)
// Calls of this many rows or more run on AMX-INT8 tiles where the CPU has
// them, K fits the int32 sums and the workspace holds their scratch
// (measured: BM_shape_int8, 4 x 288 x 768 on tiles 18.5 us against the
// AVX-512 loop's 36.4; see the README).
constexpr int64_t kMinRowsInt8Amx = 4;
// Rows split per pass: each thread's weight panel serves them all, and
// their three digit planes stay in L2 (256 x 768: 0.6 MB).
constexpr int64_t kMaxRowsPassInt8Amx = 256;

bool use_amx(int64_t rows, int64_t k) {
  return rows >= kMinRowsInt8Amx && k <= kMaxKInt8Amx && quant_isa() == QuantIsa::kAmx &&
         cpu_runs_linear_int8_amx();
}

// The AMX path's scratch: a pass's split rows, then one weight panel per
// part (thread) of the columns.
size_t amx_scratch_bytes(int64_t rows, int64_t k, size_t parts) {
  return round_up64(split_rows_int8_amx_bytes(std::min(rows, kMaxRowsPassInt8Amx), k)) +
         parts * linear_int8_amx_panel_bytes(k);
}

// A pass of this many blocks of 16 rows per thread or more splits its rows
// over the threads instead of its columns: each thread splits its own rows
// and multiplies them by every column, so a call is one parallel_for (not
// one for the split and one for the columns) and no thread reads digits
// another core wrote; the price is every thread laying out every column's
// weights (a few percent of a call: perf, 128 x 288 x 288).
constexpr int64_t kMinRowBlocksPerPartInt8Amx = 2;

int64_t row_blocks_int8_amx(int64_t rows) { return (rows + 15) / 16; }

// Rows of part p's share of `blocks` blocks of 16 rows (at most `rows`).
int64_t part_row_begin(int64_t blocks, int64_t parts, int64_t p) { return blocks * p / parts * 16; }

// The row split's scratch: per part, its rows' split and one panel.
size_t amx_row_part_bytes(int64_t rows, int64_t k, int64_t parts) {
  const int64_t blocks = row_blocks_int8_amx(std::min(rows, kMaxRowsPassInt8Amx));
  const int64_t part_rows = (blocks + parts - 1) / parts * 16;
  return round_up64(split_rows_int8_amx_bytes(part_rows, k)) + linear_int8_amx_panel_bytes(k);
}

bool splits_rows_int8_amx(int64_t rows, int64_t parts) {
  return parts > 1 && row_blocks_int8_amx(std::min(rows, kMaxRowsPassInt8Amx)) >=
                          kMinRowBlocksPerPartInt8Amx * parts;
}

// Rows [r0, r1) of the pass (x its rows) split into `split`, and *part the
// call that multiplies them; false when one of them holds inf or NaN.
bool split_part_int8_amx(const float* x, const RowsInt8Amx& pass, int64_t r0, int64_t r1, void* split,
                         RowsInt8Amx* part) {
  if (!split_rows_int8_amx(x + r0 * pass.k, r1 - r0, pass.k, split)) return false;
  *part = pass;
  part->split = split;
  part->rows = r1 - r0;
  part->out = pass.out + r0 * pass.n;
  return true;
}

// The pass on AMX tiles with its rows split over `parts` threads (one job);
// false when some activation is inf or NaN.
bool run_amx_row_parts(const float* x, RowsInt8Amx pass, char* scratch, size_t part_bytes,
                       int64_t parts) {
  const int64_t k = pass.k;
  const int64_t blocks = row_blocks_int8_amx(pass.rows);
  const size_t split_bytes = part_bytes - linear_int8_amx_panel_bytes(k);
  std::atomic<bool> finite{true};
  threadpool::parallel_for(static_cast<size_t>(parts), 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t p = static_cast<int64_t>(t);
      const int64_t r0 = part_row_begin(blocks, parts, p);
      const int64_t r1 = std::min(pass.rows, part_row_begin(blocks, parts, p + 1));
      if (r0 >= r1) continue;
      char* mine = scratch + p * part_bytes;
      RowsInt8Amx part;
      if (!split_part_int8_amx(x, pass, r0, r1, mine, &part)) {
        finite.store(false, std::memory_order_relaxed);
        continue;
      }
      linear_int8_amx_columns(part, mine + split_bytes, 0, pass.n);
    }
  });
  return finite.load(std::memory_order_relaxed);
}

// Row chunks: a pass of at least 2 blocks of 16 rows per thread, whose
// columns' laid-out weights (K x N bytes) fit kMaxChunkPanelBytes, runs one
// job of one chunk per block of 16 rows. A thread lays out every column's
// weights once, at its first chunk, into its own slot of scratch, then
// splits and multiplies the rows of each chunk it takes. So a thread whose
// core runs slowly (another process on it, or its AMX unit slowed for a
// while: on this VM one core's tile multiplies were seen 3-5x slower than
// the other's for 0.1-2 s) leaves its chunks to the others (the pool's
// stealing), where a half of the rows each held the call for the slow half.
constexpr int64_t kMaxChunkPanelBytes = 512 * 1024;

// One slot: one block of 16 rows' split, then every column's panels.
size_t amx_chunk_slot_bytes(int64_t k, int64_t n) {
  return round_up64(split_rows_int8_amx_bytes(16, k)) + round_up64(linear_int8_amx_layout_bytes(k, n));
}

bool chunks_rows_int8_amx(int64_t rows, int64_t k, int64_t n, int64_t threads) {
  return threads > 1 && threads <= ChunkSlots::kMaxSlots &&
         row_blocks_int8_amx(std::min(rows, kMaxRowsPassInt8Amx)) >= kMinRowBlocksPerPartInt8Amx * threads &&
         linear_int8_amx_layout_bytes(k, n) <= kMaxChunkPanelBytes;
}

// The pass on AMX tiles in chunks of 16 rows (above), scratch holding
// `threads` slots; false when some activation is inf or NaN or a chunk
// found no slot.
bool run_amx_row_chunks(const float* x, const RowsInt8Amx& pass, char* scratch, size_t slot_bytes,
                        int64_t threads) {
  const int64_t k = pass.k;
  const size_t split_bytes = round_up64(split_rows_int8_amx_bytes(16, k));
  ChunkSlots slots(threads);
  std::atomic<bool> ok{true};
  threadpool::parallel_for(static_cast<size_t>(row_blocks_int8_amx(pass.rows)), 1, [&](size_t begin, size_t end) {
    bool fresh = false;
    const int64_t slot = slots.mine(&fresh);
    if (slot < 0) {
      ok.store(false, std::memory_order_relaxed);
      return;
    }
    char* split = scratch + slot * slot_bytes;
    char* panels = split + split_bytes;
    if (fresh) linear_int8_amx_layout(pass, panels, 0, pass.n);
    const Int8AmxTileScope tiles;
    for (size_t b = begin; b < end; ++b) {
      const int64_t r0 = static_cast<int64_t>(b) * 16;
      RowsInt8Amx part;
      if (!split_part_int8_amx(x, pass, r0, std::min(pass.rows, r0 + 16), split, &part)) {
        ok.store(false, std::memory_order_relaxed);
        continue;
      }
      linear_int8_amx_multiply(part, panels, 0, pass.n);
    }
  });
  return ok.load(std::memory_order_relaxed);
}

// The call on AMX tiles, a pass of up to kMaxRowsPassInt8Amx rows at a
// time; false when the workspace is too small for one part or some
// activation is inf or NaN (the caller's loops then compute every row).
bool run_amx(KernelContext& ctx, const float* x, int64_t rows, RowsInt8Amx base) {
  const int64_t k = base.k;
  const int64_t pass_rows = std::min(rows, kMaxRowsPassInt8Amx);
  const int64_t threads = static_cast<int64_t>(threadpool::num_threads());
  const bool aligned = ctx.scratch() != nullptr && reinterpret_cast<uintptr_t>(ctx.scratch()) % 64 == 0;
  const size_t chunk_slot_bytes = amx_chunk_slot_bytes(k, base.n);
  const bool row_chunks = chunks_rows_int8_amx(rows, k, base.n, threads) && aligned &&
                          ctx.scratch_bytes() >= static_cast<size_t>(threads) * chunk_slot_bytes;
  const size_t row_part_bytes = amx_row_part_bytes(rows, k, threads);
  const bool row_parts = splits_rows_int8_amx(rows, threads) && aligned &&
                         ctx.scratch_bytes() >= static_cast<size_t>(threads) * row_part_bytes;
  const size_t panel_bytes = linear_int8_amx_panel_bytes(k);
  const PanelScratch scratch =
      carve_panel_scratch(ctx.scratch(), ctx.scratch_bytes(),
                          round_up64(split_rows_int8_amx_bytes(pass_rows, k)), panel_bytes, base.n);
  if (!row_chunks && !row_parts && scratch.parts == 0) return false;
  for (int64_t p0 = 0; p0 < rows; p0 += pass_rows) {
    const int64_t in_pass = std::min(pass_rows, rows - p0);
    RowsInt8Amx pass = base;
    pass.rows = in_pass;
    pass.out = base.out + p0 * base.n;
    if (row_chunks) {
      if (!run_amx_row_chunks(x + p0 * k, pass, static_cast<char*>(ctx.scratch()), chunk_slot_bytes,
                              threads)) {
        return false;
      }
      continue;
    }
    if (row_parts) {
      if (!run_amx_row_parts(x + p0 * k, pass, static_cast<char*>(ctx.scratch()), row_part_bytes, threads)) {
        return false;
      }
      continue;
    }
    // Split by all threads in blocks of 16 rows (each block's rows once).
    std::atomic<bool> finite{true};
    threadpool::parallel_for(static_cast<size_t>((in_pass + 15) / 16), 1, [&](size_t b0, size_t b1) {
      if (!split_row_range_int8_amx(x + p0 * k, in_pass, k, scratch.rows, static_cast<int64_t>(b0),
                                    static_cast<int64_t>(b1))) {
        finite.store(false, std::memory_order_relaxed);
      }
    });
    if (!finite.load(std::memory_order_relaxed)) return false;
    pass.split = scratch.rows;
    // Each part converts the columns it multiplies into its own panel.
    parallel_column_parts(base.n, scratch.parts, [&](int64_t part, int64_t c0, int64_t c1) {
      linear_int8_amx_columns(pass, scratch.panels + part * panel_bytes, c0, c1);
    });
  }
  return true;
}
#endif

// What prepare keeps for a constant weight: its columns' sums, for the
// one-row VNNI loop's +128 offset.
struct PreparedInt8 {
  const int8_t* weight;  // The weight they were made from.
  const int32_t* weight_sums;  // [N]
};

// A one-row loop's split row: 64-byte aligned in the call's scratch (prepare
// reserves bytes + 63), else in temp memory; null when neither has room.
void* one_row_digits(KernelContext& ctx, size_t bytes) {
  if (ctx.scratch() != nullptr && ctx.scratch_bytes() >= bytes + 63) {
    return reinterpret_cast<void*>(round_up64(reinterpret_cast<uintptr_t>(ctx.scratch())));
  }
  return ctx.allocate_temp(bytes, 64);
}

// The one-row call on the VNNI loop; false (nothing written) when the row
// holds inf or NaN or no memory is left for its digits.
bool run_vnni_row(KernelContext& ctx, const float* x, const RowsInt8& base) {
  const ColumnsInt8VnniFn columns = select_linear_int8_vnni();
  const SplitRowInt8VnniFn split = select_split_row_int8_vnni();
  const size_t bytes = int8_vnni_digit_bytes(base.k);
  auto* digits = static_cast<uint8_t*>(one_row_digits(ctx, bytes));
  RowInt8Vnni row{};
  if (columns == nullptr || split == nullptr || digits == nullptr ||
      !split(x, base.k, digits, &row.exponent)) {
    return false;
  }
  const PreparedInt8* prepared = ctx.state<PreparedInt8>();
  row.u = digits;
  row.plane = static_cast<int64_t>(bytes / 3);
  row.weight = base.weight;
  row.scales = base.scales;
  row.bias = base.bias;
  row.weight_sums = prepared != nullptr && prepared->weight == base.weight ? prepared->weight_sums
                                                                            : nullptr;
  row.k = base.k;
  row.out = base.out;
  parallel_column_chunks(base.n, 1, base.k,
                         [&](int64_t n_begin, int64_t n_end) { columns(row, n_begin, n_end); });
  return true;
}

#if defined(__x86_64__) || defined(_M_X64)
// The one-row call on the int16-digit loop (AVX2 without VNNI); false
// (nothing written) when the row holds inf or NaN or no memory is left for
// its digits.
bool run_int16_digits_row(KernelContext& ctx, const float* x, const RowsInt8& base) {
  auto* digits = static_cast<int16_t*>(one_row_digits(ctx, int16_digit_bytes(base.k)));
  RowInt8Int16Digits row{};
  if (digits == nullptr || !split_row_int16_digits_avx2(x, base.k, digits, &row.exponent)) return false;
  row.digits = digits;
  row.plane = int16_digit_plane(base.k);
  row.weight = base.weight;
  row.scales = base.scales;
  row.bias = base.bias;
  row.k = base.k;
  row.out = base.out;
  parallel_column_chunks(base.n, 1, base.k, [&](int64_t n_begin, int64_t n_end) {
    linear_int8_int16_digits_avx2(row, n_begin, n_end);
  });
  return true;
}
#endif

}  // namespace

Status linear_int8_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static(args));
  // Prefill-shaped calls (rows from the input's planned shape) get scratch
  // for the dequantized GEMM.
  const Tensor& weight = args[1]->to_tensor();
  const int64_t k = weight.size(1);
  const int64_t planned_rows = args[0]->to_tensor().numel() / k;
  call->scratch_bytes = weight_only_gemm_scratch_bytes(planned_rows, k, weight.size(0));
#if defined(__x86_64__) || defined(_M_X64)
  if (use_amx(planned_rows, k)) {
    const size_t threads = threadpool::num_threads();
    call->scratch_bytes = std::max(call->scratch_bytes, amx_scratch_bytes(planned_rows, k, threads));
    const int64_t n = weight.size(0);
    if (chunks_rows_int8_amx(planned_rows, k, n, static_cast<int64_t>(threads))) {
      call->scratch_bytes = std::max(call->scratch_bytes, threads * amx_chunk_slot_bytes(k, n));
    }
    if (splits_rows_int8_amx(planned_rows, static_cast<int64_t>(threads))) {
      call->scratch_bytes = std::max(
          call->scratch_bytes, threads * amx_row_part_bytes(planned_rows, k, static_cast<int64_t>(threads)));
    }
  }
#endif
  if (linear_int8_takes_int16_digits(k)) {  // Decode's split row (64-byte aligned).
    call->scratch_bytes = std::max(call->scratch_bytes, int16_digit_bytes(k) + 63);
  }
  if (linear_int8_takes_vnni(k)) {
    // Decode's split row (64-byte aligned), and a constant weight's column sums.
    call->scratch_bytes = std::max(call->scratch_bytes, int8_vnni_digit_bytes(k) + 63);
    if (ctx.is_constant(1)) {
      const int64_t n = weight.size(0);
      auto* prepared = static_cast<PreparedInt8*>(ctx.allocate(sizeof(PreparedInt8)));
      auto* sums = static_cast<int32_t*>(ctx.allocate(sizeof(int32_t) * static_cast<size_t>(n)));
      TL_CHECK_OR_RETURN(prepared != nullptr && sums != nullptr, Error::kMemoryAllocationFailed,
                         "no method memory for the weight's %lld column sums",
                         static_cast<long long>(n));
      prepared->weight = weight.const_data_ptr<int8_t>();
      prepared->weight_sums = sums;
      parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
        weight_sums_qs8(prepared->weight, k, n_begin, n_end, sums);
      });
      call->state = prepared;
    }
  }
  return Error::kOk;
}

void linear_int8_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_static(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[3]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const size_t dim = input.tensor.dim();
  const int64_t k = input.tensor.size(dim - 1);
  const int64_t n = weight.tensor.size(0);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_linear_out(input, weight, scales, bias, out, n));
  const ColumnsInt8Fn columns = select_linear_int8();
  const int64_t rows = input.tensor.numel() / k;
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  RowsInt8 base{};
  base.weight = weight.tensor.const_data_ptr<int8_t>();
  base.scales = scales.tensor.const_data_ptr<float>();
  base.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
  base.k = k;
  base.n = n;
#if defined(__x86_64__) || defined(_M_X64)
  if (use_amx(rows, k)) {
    RowsInt8Amx amx{};
    amx.weight = base.weight;
    amx.scales = base.scales;
    amx.bias = base.bias;
    amx.k = k;
    amx.n = n;
    amx.out = y;
    if (run_amx(ctx, x, rows, amx)) {
      set_return(args, 5, *args[4]);
      return;
    }
  }
  if (rows == 1 && linear_int8_takes_int16_digits(k)) {
    base.out = y;
    if (run_int16_digits_row(ctx, x, base)) {
      set_return(args, 5, *args[4]);
      return;
    }
  }
#endif
  if (rows == 1 && linear_int8_takes_vnni(k)) {
    base.out = y;
    if (run_vnni_row(ctx, x, base)) {
      set_return(args, 5, *args[4]);
      return;
    }
  }
  const Int8Weights weights{base.weight, base.scales, k};
  const DequantizedGemm problem{x, rows, k, n, base.bias, y, dequantize_int8_rows, &weights};
  Status gemm;
  if (run_weight_only_gemm(ctx, problem, &gemm)) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, gemm);
    set_return(args, 5, *args[4]);
    return;
  }
  // One job for all rows: each chunk of columns serves every block of rows
  // while its weights are in cache, and prefill pays one fork-join per op.
  parallel_column_chunks(n, rows, k, [&](int64_t n_begin, int64_t n_end) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRowsInt8) {
      RowsInt8 block = base;
      block.x = x + r0 * k;
      block.rows = static_cast<int>(std::min<int64_t>(kRowsInt8, rows - r0));
      block.out = y + r0 * n;
      columns(block, n_begin, n_end);
    }
  });
  set_return(args, 5, *args[4]);
}

}  // namespace torchlight::quantized
