// torchlight::linear_8da4w.out(Tensor input, Tensor weight, Tensor weight_scales,
//     int group_size, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)
//
// The fused form of torchao's 8da4w linear (Int8DynActInt4WeightLinear) as
// the decomposed graph computes it: each input row [.., K] gets
// choose_qparams_per_token_asymmetric and quantize_per_token to int8
// (exactly as those kernels do), then out = dequantized row @ dequantized
// weight^T (+ bias), with the weight int4 group-wise symmetric: weight uint8
// [N, K / 2] (two values a byte, value + 8 in each nibble, high nibble
// first), weight_scales float32 [N, K / group_size]. Integer sums are exact
// (int32); the result differs from the decomposed float graph only by float
// rounding. All rows (up to kMaxRowsPerPass) are quantized first, then one
// parallel_for splits the columns over the thread pool and each chunk of
// columns serves every row in blocks of four (each unpacked weight vector
// serves the block; the chunk's weights stay in cache across blocks). The
// inner loop is AVX2 + FMA where the CPU has it (linear_8da4w.h).
// Prefill (at least kMinRowsDequantizedGemm rows, groups up to
// kMaxGroupDequantizedGemm) instead runs the decomposed graph's
// own float arithmetic on the fp32 GEMM: each row quantized and dequantized
// ((q - zp) * scale), the weight dequantized a panel at a time into scratch
// (dequantized_gemm.h) where the integer tile below is not available.
// With AVX2 or VNNI (group % 32 == 0), calls of kMinRowsTile8da4w rows or
// more take the integer tile (select_tile_8da4w): the same sums as the loops,
// from activations laid out once per call for it, so the same floats.
// Each column's weight sum depends on the weight alone: prepare computes it
// when the weight and its scales are program constants (else a tile call
// computes it per call, and the loops inline).
// With AMX (QuantIsa::kAmx), calls of kMinRowsAmx8da4w rows or more run on
// tiles (linear_8da4w_amx.h) ahead of both: the rows quantized into
// workspace scratch, each thread unpacking the weight columns it multiplies.
// Where the CPU's best path is AVX2 (no VNNI), prepare packs a constant
// weight (linear_8da4w_packed.h) and releases the original's pages: every
// call then runs on the packed copy (decode one row, the many-row loop
// otherwise), ahead of all the paths above.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/chunk_slots.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/dequantized_gemm.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_amx.h"
#include "kernels/quantized/linear_8da4w_packed.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/prefill_8da4w.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"
#include "runtime/platform/release_resident.h"

namespace torchlight::quantized {
namespace {


// Rows quantized and arranged per pass: prefill's whole prompt in one pass
// when scratch allows (each chunk of columns then stays in cache while it
// serves every row), never fewer than one block.
constexpr int64_t kMaxRowsPerPass = 256;

size_t row_bytes(int64_t k, int64_t group) {
  return static_cast<size_t>(k) + sizeof(float) * static_cast<size_t>(k / group);
}

// `rows` rows, plus the padding that aligns the corrections to 4 bytes.
size_t pass_bytes(int64_t k, int64_t group, int64_t rows) {
  return row_bytes(k, group) * static_cast<size_t>(rows) + sizeof(float);
}

// Calls with this many rows or more take the integer tile where the CPU has
// it. The tile does less per row than the loops (no lane permutes, no
// weight sums) but pays a pass over the rows to lay them out, and without
// precomputed sums one over the weights.
constexpr int64_t kMinRowsTile8da4w = 4;

bool tile_available(int64_t group) { return select_tile_8da4w(group) != nullptr; }

// Long prefills (64 rows or more) of short rows on one thread still go to
// the dequantized GEMM: the tile finishes every (row, column) with three
// lane folds and the corrections, which K / group groups of work must
// amortise (bench/quantized BM_shape_8da4w, 128 rows, group 32, best of 3
// on a loaded machine, tile against GEMM: 1 thread, K = 288 (9 groups)
// 0.83-0.9x; K = 768 and stories110m's shapes 1.3-2.4x; 2 threads every
// shape 1.9-4x, the tile splitting columns with no shared weight panel).
constexpr int64_t kMinGroupsTileOverGemm = 16;

bool use_dequantized_gemm(int64_t rows, int64_t k, int64_t group, size_t threads) {
  if (rows < kMinRowsDequantizedGemm || group > kMaxGroupDequantizedGemm) return false;
  return !tile_available(group) || (threads == 1 && k / group < kMinGroupsTileOverGemm);
}

bool use_tile(int64_t rows, int64_t group) {
  return rows >= kMinRowsTile8da4w && tile_available(group);
}

// The rows x [rows, K] of a pass quantized per token, split over the pool
// (rows are independent): each row's qparams kept, then
// store(r, x_row, scale, zero_point) writes its quantized values.
template <typename Store>
void quantize_pass(const float* x, int64_t k, int64_t rows, int32_t* zero_points,
                   float* row_scales, const Store& store) {
  const RowRangeF32Fn range = select_row_range_f32();
  threadpool::parallel_for(static_cast<size_t>(rows), 8, [&](size_t begin, size_t end) {
    for (int64_t r = static_cast<int64_t>(begin); r < static_cast<int64_t>(end); ++r) {
      const float* x_row = x + r * k;
      double scale = 0;
      int64_t zero_point = 0;
      token_qparams_from_range<float>(range(x_row, k), &scale, &zero_point);
      zero_points[r] = static_cast<int32_t>(zero_point);
      row_scales[r] = static_cast<float>(scale);
      store(r, x_row, scale, zero_point);
    }
  });
}

// Calls of this many rows or more run on AMX tiles where the CPU has them
// (group % 32 == 0) and the workspace holds their scratch. Measured against
// the AVX-512 VNNI tile (bench/quantized/isa_bench.cpp, group 32, one
// thread, CPU time, best of 3, loaded machine): 4 rows lose (288 x 768
// 38 vs 25 us, 768 x 288 30 vs 16: a tile of 16 rows does the work of 16),
// 8 rows win or tie (35 vs 89, 31 vs 37), 12 and 16 win (2-3x).
constexpr int64_t kMinRowsAmx8da4w = 8;

bool use_amx(int64_t rows, int64_t group) {
  return quant_isa() == QuantIsa::kAmx && group % 32 == 0 && rows >= kMinRowsAmx8da4w;
}

// The AMX path's scratch: a pass's quantized rows, padded to whole tiles of
// zero rows, then one weight panel per part (thread) of the columns.
size_t amx_rows_bytes(int64_t rows, int64_t k) {
  const int64_t padded = (rows + kAmxTileRows8da4w - 1) / kAmxTileRows8da4w * kAmxTileRows8da4w;
  return round_up64(static_cast<size_t>(padded * amx_row_stride_8da4w(k)));
}

size_t amx_scratch_bytes(int64_t rows, int64_t k, int64_t group, size_t parts) {
#if defined(__x86_64__) || defined(_M_X64)
  return amx_rows_bytes(std::min(rows, kMaxRowsPerPass), k) +
         parts * linear_8da4w_amx_panel_bytes(k, group);
#else
  (void)rows, (void)k, (void)group, (void)parts;
  return 0;
#endif
}

#if defined(__x86_64__) || defined(_M_X64)
// The call on AMX tiles, a pass of up to kMaxRowsPerPass rows at a time;
// false when the workspace is too small for one part (nothing written) or
// a chunk found no panel (cannot happen with one per pool thread; the
// caller's paths then write every output).
bool run_amx(KernelContext& ctx, const float* x, int64_t rows, Rows8da4wAmx base) {
  static_assert(kColumnsPerChunk % kAmxTileRows8da4w == 0, "parts start on a tile's columns");
  const int64_t k = base.k;
  const int64_t pass_rows = std::min(rows, kMaxRowsPerPass);
  const int64_t stride = amx_row_stride_8da4w(k);
  const size_t panel_bytes = linear_8da4w_amx_panel_bytes(k, base.group);
  const PanelScratch scratch = carve_panel_scratch(
      ctx.scratch(), ctx.scratch_bytes(), amx_rows_bytes(pass_rows, k), panel_bytes, base.n);
  if (scratch.parts == 0) return false;
  auto* xq = reinterpret_cast<int8_t*>(scratch.rows);
  for (int64_t p0 = 0; p0 < rows; p0 += pass_rows) {
    const int64_t in_pass = std::min(pass_rows, rows - p0);
    int32_t zero_points[kMaxRowsPerPass];
    float row_scales[kMaxRowsPerPass];
    // Rows split over the pool (independent), as quantize_pass splits them.
    threadpool::parallel_for(static_cast<size_t>(in_pass), 8, [&](size_t begin, size_t end) {
      const int64_t r = static_cast<int64_t>(begin);
      quantize_rows_8da4w_amx(x + (p0 + r) * k, static_cast<int64_t>(end) - r, k, stride,
                              xq + r * stride, zero_points + r, row_scales + r);
    });
    // The last tile's rows past the pass: zeros (their sums are not stored).
    const int64_t padded = (in_pass + kAmxTileRows8da4w - 1) / kAmxTileRows8da4w * kAmxTileRows8da4w;
    std::memset(xq + in_pass * stride, 0, static_cast<size_t>((padded - in_pass) * stride));
    Rows8da4wAmx pass = base;
    pass.xq = xq;
    pass.stride = stride;
    pass.zero_point = zero_points;
    pass.scale = row_scales;
    pass.rows = in_pass;
    pass.out = base.out + p0 * base.n;
    if (scratch.parts == static_cast<int64_t>(threadpool::num_threads())) {
      // A panel per thread (chunk_slots.h), and chunks of 32 columns on the
      // pool, so a thread whose core runs slowly (another process on it,
      // or its AMX unit slowed for a while) leaves chunks to the others
      // instead of holding the call for its half of the columns.
      ChunkSlots slots(scratch.parts);
      std::atomic<bool> ok{true};
      threadpool::parallel_for(static_cast<size_t>((base.n + 31) / 32), 1, [&](size_t begin, size_t end) {
        bool fresh = false;
        const int64_t slot = slots.mine(&fresh);  // One per pool thread: -1 only past them.
        if (slot < 0) {
          ok.store(false, std::memory_order_relaxed);
          return;
        }
        linear_8da4w_amx_columns(pass, scratch.panels + slot * panel_bytes, static_cast<int64_t>(begin) * 32,
                                 std::min(base.n, static_cast<int64_t>(end) * 32));
      });
      if (!ok.load(std::memory_order_relaxed)) return false;  // The caller's paths write every output.
      continue;
    }
    // Each part unpacks the columns it multiplies into its own panel.
    parallel_column_parts(base.n, scratch.parts, [&](int64_t part, int64_t c0, int64_t c1) {
      linear_8da4w_amx_columns(pass, scratch.panels + part * panel_bytes, c0, c1);
    });
  }
  return true;
}
#endif

// What prepare keeps for a constant weight: its columns' folded sums and,
// where the CPU's build has one, the weight packed for every call.
struct Prepared8da4w {
  const uint8_t* weight;  // The weight and scales they were made from.
  const float* w_scales;
  const float* u_folded;  // [N]
  Packed8da4wFn packed_decode;      // Null: every call runs the loops, tile or GEMM.
  PackedRows8da4wFn packed_rows;    // Non-null with packed_decode: calls of 2 rows or more.
  Packed8da4w packed;
};

// Packs the constant weight (linear_8da4w_packed.h) into method memory when
// the ISA has packed loops; without the memory every call keeps the loops,
// tile or GEMM (the same results up to float rounding), so load goes on.
// Packed, the original weight and scales are never read by this kernel
// again, so their pages may leave resident memory right away: slice by
// slice of about kPackSliceBytes of the original, so load's peak stays
// about one slice above the packed total. Mapped from the file, they come
// back from it if something else reads them (an embedding sharing the
// weight looks up its rows).
constexpr int64_t kPackSliceBytes = int64_t{1} << 20;

void pack_weight(PrepareContext& ctx, int64_t k, int64_t n, int64_t group, Prepared8da4w* prepared) {
  prepared->packed_decode = nullptr;
  prepared->packed_rows = nullptr;
  const Packed8da4wFn decode = select_packed_8da4w(k, group);
  const PackedRows8da4wFn many_rows = select_packed_rows_8da4w(k, group);
  if (decode == nullptr || many_rows == nullptr) return;
  void* memory = ctx.allocate(packed_8da4w_bytes(k, n, group), 64);
  if (memory == nullptr) return;
  const int64_t blocks = packed_blocks_8da4w(n);
  const int64_t block_bytes = kPackedColumns8da4w * (k / 2);
  const int64_t slice_blocks = std::max<int64_t>(1, kPackSliceBytes / block_bytes);
  for (int64_t s0 = 0; s0 < blocks; s0 += slice_blocks) {
    const int64_t s1 = std::min(blocks, s0 + slice_blocks);
    threadpool::parallel_for(static_cast<size_t>(s1 - s0), 4, [&](size_t begin, size_t end) {
      pack_8da4w(prepared->weight, prepared->w_scales, k, n, group, memory, s0 + static_cast<int64_t>(begin),
                 s0 + static_cast<int64_t>(end));
    });
    // Columns [0, c1) are packed: release their rows from the start (the
    // pages a slice boundary splits leave with the next slice).
    const size_t c1 = static_cast<size_t>(std::min(n, s1 * kPackedColumns8da4w));
    tl_platform_release_resident(prepared->weight, c1 * static_cast<size_t>(k / 2));
    tl_platform_release_resident(prepared->w_scales, c1 * sizeof(float) * static_cast<size_t>(k / group));
  }
  prepared->packed = packed_8da4w_view(memory, k, n, group);
  prepared->packed_decode = decode;
  prepared->packed_rows = many_rows;
}

// What prepare made for this very weight and scales, or null (a weight that
// was not constant at prepare, or another call's arguments).
const Prepared8da4w* prepared_for(const Prepared8da4w* prepared, const uint8_t* weight,
                                  const float* w_scales) {
  return prepared != nullptr && prepared->weight == weight && prepared->w_scales == w_scales
             ? prepared
             : nullptr;
}

}  // namespace

bool linear_8da4w_takes_dequantized_gemm(int64_t rows, int64_t k, int64_t group) {
  return !use_amx(rows, group) && use_dequantized_gemm(rows, k, group, threadpool::num_threads());
}

bool linear_8da4w_takes_amx(int64_t rows, int64_t group) { return use_amx(rows, group); }

Status linear_8da4w_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_packed_int4_linear(args));
  // Quantized, arranged activation rows with their corrections (K from the
  // weight's fixed shape; rows from the input's planned shape), and room
  // for the tile's per-call weight sums.
  const int64_t k = args[1]->to_tensor().size(1) * 2;
  const int64_t n = args[1]->to_tensor().size(0);
  const int64_t group = args[3]->to_int();
  const int64_t rows = std::clamp<int64_t>(args[0]->to_tensor().numel() / k, kRows8da4w,
                                           kMaxRowsPerPass);
  call->scratch_bytes = pass_bytes(k, group, rows) + sizeof(float) * static_cast<size_t>(n);
  if (ctx.is_constant(1) && ctx.is_constant(2)) {
    auto* prepared = static_cast<Prepared8da4w*>(ctx.allocate(sizeof(Prepared8da4w)));
    TL_CHECK_OR_RETURN(prepared != nullptr, Error::kMemoryAllocationFailed,
                       "no method memory for linear_8da4w's prepared state");
    prepared->weight = args[1]->to_tensor().const_data_ptr<uint8_t>();
    prepared->w_scales = args[2]->to_tensor().const_data_ptr<float>();
    prepared->u_folded = nullptr;  // Packed, every call reads the packed copy's sums.
    call->state = prepared;
    pack_weight(ctx, k, n, group, prepared);
    if (prepared->packed_decode != nullptr) return Error::kOk;  // Neither AMX nor the GEMM runs.
    auto* u_folded = static_cast<float*>(ctx.allocate(sizeof(float) * static_cast<size_t>(n)));
    TL_CHECK_OR_RETURN(u_folded != nullptr, Error::kMemoryAllocationFailed,
                       "no method memory for the weight's %lld column sums", static_cast<long long>(n));
    const FoldWeightSums8da4wFn fold_sums = select_fold_weight_sums_8da4w(group);
    parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
      fold_sums(prepared->weight, prepared->w_scales, k, group, n_begin, n_end, u_folded);
    });
    prepared->u_folded = u_folded;
  }
  const int64_t planned_rows = args[0]->to_tensor().numel() / k;
  if (use_amx(planned_rows, group)) {
    call->scratch_bytes = std::max(
        call->scratch_bytes, amx_scratch_bytes(planned_rows, k, group, threadpool::num_threads()));
  }
  // Reserved whenever some thread count would take the GEMM, so the choice
  // can follow the pool's size at run time.
  if (use_dequantized_gemm(planned_rows, k, group, 1)) {
    call->scratch_bytes = std::max(
        call->scratch_bytes,
        dequantized_gemm_scratch_bytes(k, args[1]->to_tensor().size(0), planned_rows * k,
                                       threadpool::num_threads()));
  }
  return Error::kOk;
}

void linear_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_packed_int4_linear(args));
  const auto [input, weight, scales, bias, out] = PackedInt4LinearArgs(args);
  const size_t dim = input.tensor.dim();
  const int64_t k = input.tensor.size(dim - 1);
  const int64_t n = weight.tensor.size(0);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_linear_out(input, weight, scales, bias, out, n));
  const int64_t group = args[3]->to_int();
  const int64_t groups = k / group;
  const int64_t rows = k == 0 ? 0 : input.tensor.numel() / k;
  const Prepared8da4w* prepared = prepared_for(ctx.state<Prepared8da4w>(),
                                               weight.tensor.const_data_ptr<uint8_t>(),
                                               scales.tensor.const_data_ptr<float>());
  // Every call on the weight prepare packed (its original was released).
  const Prepared8da4w* packed =
      prepared != nullptr && prepared->packed_decode != nullptr ? prepared : nullptr;
#if defined(__x86_64__) || defined(_M_X64)
  if (packed == nullptr && use_amx(rows, group)) {
    Rows8da4wAmx amx{};
    amx.weight = weight.tensor.const_data_ptr<uint8_t>();
    amx.w_scales = scales.tensor.const_data_ptr<float>();
    amx.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
    amx.k = k;
    amx.n = n;
    amx.group = group;
    amx.out = out.tensor.mutable_data_ptr<float>();
    if (run_amx(ctx, input.tensor.const_data_ptr<float>(), rows, amx)) {
      set_return(args, 6, *args[5]);
      return;
    }
  }
#endif
  DequantizedGemmScratch dq_scratch;
  if (packed == nullptr && use_dequantized_gemm(rows, k, group, threadpool::num_threads()) &&
      carve_dequantized_gemm_scratch(ctx.scratch(), ctx.scratch_bytes(), k, n, rows * k,
                                     &dq_scratch)) {
    const float* x = input.tensor.const_data_ptr<float>();
    const QuantizeDequantizeTokenFn quantize_dequantize = select_quantize_dequantize_token();
    // Each row quantized per token exactly as the unfused graph does, then
    // dequantized: (q - zero_point) * scale, with the scale as float32.
    threadpool::parallel_for(static_cast<size_t>(rows), 8, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const float* x_row = x + static_cast<int64_t>(r) * k;
        double scale = 0;
        int64_t zero_point = 0;
        token_qparams(x_row, k, &scale, &zero_point);
        quantize_dequantize(x_row, k, scale, zero_point, dq_scratch.activations + r * k);
      }
    });
    const Int4Weights weights{weight.tensor.const_data_ptr<uint8_t>(),
                              scales.tensor.const_data_ptr<float>(), k, group};
    DequantizedGemm problem;
    problem.x = dq_scratch.activations;
    problem.rows = rows;
    problem.k = k;
    problem.n = n;
    problem.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
    problem.out = out.tensor.mutable_data_ptr<float>();
    problem.dequantize = select_dequantize_int4_rows(group);
    problem.weights = &weights;
    TL_KERNEL_RETURN_IF_ERROR(ctx, run_dequantized_gemm(problem, dq_scratch));
    set_return(args, 6, *args[5]);
    return;
  }
  // The weight sums prepare made for this very weight (null when packed).
  const float* u_folded = prepared != nullptr ? prepared->u_folded : nullptr;
  const bool tile = packed == nullptr && use_tile(rows, group);
  const bool own_u = tile && u_folded == nullptr;  // The tile needs the sums; make them here.
  const size_t u_bytes = own_u ? sizeof(float) * static_cast<size_t>(n) : 0;
  const size_t per_row = row_bytes(k, group);
  int64_t pass_rows = std::clamp<int64_t>(rows, 1, kMaxRowsPerPass);
  void* scratch = ctx.scratch();
  if (scratch != nullptr && ctx.scratch_bytes() >= pass_bytes(k, group, kRows8da4w) + u_bytes) {
    pass_rows = std::min<int64_t>(
        pass_rows, static_cast<int64_t>((ctx.scratch_bytes() - u_bytes - sizeof(float)) / per_row));
  } else {
    pass_rows = std::min<int64_t>(pass_rows, kRows8da4w);
    scratch = ctx.allocate_temp(pass_bytes(k, group, pass_rows) + u_bytes, 64);
  }
  TL_KERNEL_CHECK(ctx, scratch != nullptr, Error::kMemoryAllocationFailed,
                  "no scratch memory for %lld quantized rows of %lld values",
                  static_cast<long long>(pass_rows), static_cast<long long>(k));
  // Laid out as the tile's [N] weight sums (when made here), [pass_rows, K]
  // int8 activations, then [pass_rows, groups] float corrections (K is
  // even, the corrections' offset a multiple of 4 once rounded).
  float* own_sums = static_cast<float*>(scratch);
  int8_t* xq = static_cast<int8_t*>(scratch) + u_bytes;
  float* correction = reinterpret_cast<float*>(
      reinterpret_cast<char*>(xq) + ((static_cast<size_t>(k * pass_rows) + 3) / 4) * 4);
  const Columns8da4wFn columns = tile ? select_tile_8da4w(group) : select_linear_8da4w(group);
  const FoldWeightSums8da4wFn fold_sums = select_fold_weight_sums_8da4w(group);
  const QuantizeArranged8da4wFn quantize_row = select_quantize_arranged_8da4w(group);
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  Row8da4w base{};
  base.weight = weight.tensor.const_data_ptr<uint8_t>();
  base.w_scales = scales.tensor.const_data_ptr<float>();
  base.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
  base.u_folded = own_u ? own_sums : u_folded;
  base.k = k;
  base.n = n;
  base.group = group;
  for (int64_t p0 = 0; p0 < rows; p0 += pass_rows) {
    const int64_t in_pass = std::min<int64_t>(pass_rows, rows - p0);
    int32_t zero_points[kMaxRowsPerPass];
    float row_scales[kMaxRowsPerPass];
    // Quantized and arranged (linear_8da4w.h, quantize_arranged_8da4w.h).
    auto quantize_arranged = [&](int64_t r, const float* x_row, double scale, int64_t) {
      int8_t* arranged = xq + r * k;
      quantize_row(x_row, k, group, scale, zero_points[r], arranged, correction + r * groups);
      if (tile) pair_rows_8da4w(arranged, 1, k, group);
    };
    quantize_pass(x + p0 * k, k, in_pass, zero_points, row_scales, quantize_arranged);
    parallel_column_chunks(n, in_pass, k, [&](int64_t n_begin, int64_t n_end) {
      if (packed != nullptr && in_pass == 1) {
        const PackedRow8da4w row{xq, correction, zero_points[0], row_scales[0], base.bias, y + p0 * n};
        packed->packed_decode(packed->packed, row, n_begin, n_end);
        return;
      }
      if (packed != nullptr) {
        const PackedRows8da4w many{xq, correction, zero_points, row_scales, in_pass, base.bias, y + p0 * n};
        packed->packed_rows(packed->packed, many, n_begin, n_end);
        return;
      }
      if (own_u && p0 == 0) {
        fold_sums(base.weight, base.w_scales, k, group, n_begin, n_end, own_sums);
      }
      for (int64_t r0 = 0; r0 < in_pass; r0 += kRows8da4w) {
        Row8da4w block = base;
        block.rows = static_cast<int>(std::min<int64_t>(kRows8da4w, in_pass - r0));
        block.xq = xq + r0 * k;
        block.correction = correction + r0 * groups;
        for (int r = 0; r < block.rows; ++r) {
          block.zero_point[r] = zero_points[r0 + r];
          block.scale[r] = row_scales[r0 + r];
        }
        block.out = y + (p0 + r0) * n;
        columns(block, n_begin, n_end);
      }
    });
  }
  set_return(args, 6, *args[5]);
}

}  // namespace torchlight::quantized
