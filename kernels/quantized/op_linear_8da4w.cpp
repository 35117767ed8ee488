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
// (dequantized_gemm.h, which says why this beats an int8 tile on AVX2).
#include <algorithm>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/dequantized_gemm.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/prefill_8da4w.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

Status check_static(Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[4]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  int64_t k = 0, n = 0;
  TL_RETURN_IF_ERROR(check_quantized_linear(input, ScalarType::kFloat, weight, ScalarType::kByte,
                                            "a matrix [N, K / 2] of packed int4", scales, bias, out, &k, &n));
  TL_CHECK_OR_RETURN(weight.tensor.size(1) * 2 == k && k > 0, Error::kInvalidArgument,
                     "argument 'weight' has %d packed columns, expected %lld (K / 2, K = %lld)",
                     weight.tensor.size(1), static_cast<long long>(k / 2), static_cast<long long>(k));
  const int64_t group = args[3]->to_int();
  TL_CHECK_OR_RETURN(group >= 2 && group % 2 == 0 && k % group == 0, Error::kInvalidArgument,
                     "argument 'group_size' is %lld, expected an even divisor of K = %lld",
                     static_cast<long long>(group), static_cast<long long>(k));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == n * (k / group), Error::kInvalidArgument,
                     "argument 'weight_scales' has %lld elements, expected %lld (N x K / group_size)",
                     static_cast<long long>(scales.tensor.numel()),
                     static_cast<long long>(n * (k / group)));
  return check_bias_length(bias, n);
}

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

}  // namespace

Status linear_8da4w_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static(args));
  // Quantized, arranged activation rows with their corrections (K from the
  // weight's fixed shape; rows from the input's planned shape).
  const int64_t k = args[1]->to_tensor().size(1) * 2;
  const int64_t rows = std::clamp<int64_t>(args[0]->to_tensor().numel() / k, kRows8da4w,
                                           kMaxRowsPerPass);
  call->scratch_bytes = pass_bytes(k, args[3]->to_int(), rows);
  const int64_t planned_rows = args[0]->to_tensor().numel() / k;
  if (planned_rows >= kMinRowsDequantizedGemm && args[3]->to_int() <= kMaxGroupDequantizedGemm) {
    call->scratch_bytes = std::max(
        call->scratch_bytes,
        dequantized_gemm_scratch_bytes(k, args[1]->to_tensor().size(0), planned_rows * k,
                                       threadpool::num_threads()));
  }
  return Error::kOk;
}

void linear_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_static(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[4]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  const size_t dim = input.tensor.dim();
  const int64_t k = input.tensor.size(dim - 1);
  const int64_t n = weight.tensor.size(0);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_linear_out(input, weight, scales, bias, out, n));
  const int64_t group = args[3]->to_int();
  const int64_t groups = k / group;
  const int64_t rows = k == 0 ? 0 : input.tensor.numel() / k;
  DequantizedGemmScratch dq_scratch;
  if (rows >= kMinRowsDequantizedGemm && group <= kMaxGroupDequantizedGemm &&
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
  const size_t per_row = row_bytes(k, group);
  int64_t pass_rows = std::clamp<int64_t>(rows, 1, kMaxRowsPerPass);
  void* scratch = ctx.scratch();
  if (scratch != nullptr && ctx.scratch_bytes() >= pass_bytes(k, group, kRows8da4w)) {
    pass_rows = std::min<int64_t>(
        pass_rows, static_cast<int64_t>((ctx.scratch_bytes() - sizeof(float)) / per_row));
  } else {
    pass_rows = std::min<int64_t>(pass_rows, kRows8da4w);
    scratch = ctx.allocate_temp(pass_bytes(k, group, pass_rows), 64);
  }
  TL_KERNEL_CHECK(ctx, scratch != nullptr, Error::kMemoryAllocationFailed,
                  "no scratch memory for %lld quantized rows of %lld values",
                  static_cast<long long>(pass_rows), static_cast<long long>(k));
  // Laid out as [pass_rows, K] int8 activations, then [pass_rows, groups]
  // float corrections (K is even, the corrections' offset a multiple of 4
  // once rounded).
  int8_t* xq = static_cast<int8_t*>(scratch);
  float* correction = reinterpret_cast<float*>(
      static_cast<char*>(scratch) + ((static_cast<size_t>(k * pass_rows) + 3) / 4) * 4);
  const Columns8da4wFn columns = select_linear_8da4w(group);
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  Row8da4w base{};
  base.weight = weight.tensor.const_data_ptr<uint8_t>();
  base.w_scales = scales.tensor.const_data_ptr<float>();
  base.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
  base.k = k;
  base.n = n;
  base.group = group;
  for (int64_t p0 = 0; p0 < rows; p0 += pass_rows) {
    const int64_t in_pass = std::min<int64_t>(pass_rows, rows - p0);
    int32_t zero_points[kMaxRowsPerPass];
    float row_scales[kMaxRowsPerPass];
    // Rows are independent: prefill quantizes them on every thread.
    threadpool::parallel_for(static_cast<size_t>(in_pass), 8, [&](size_t begin, size_t end) {
      for (int64_t r = static_cast<int64_t>(begin); r < static_cast<int64_t>(end); ++r) {
        const float* x_row = x + (p0 + r) * k;
        double scale = 0;
        int64_t zero_point = 0;
        token_qparams(x_row, k, &scale, &zero_point);
        zero_points[r] = static_cast<int32_t>(zero_point);
        row_scales[r] = static_cast<float>(scale);
        // Quantized a chunk at a time, then arranged (linear_8da4w.h).
        int8_t* arranged = xq + r * k;
        for (int64_t g0 = 0; g0 < k; g0 += group) {
          int32_t sum = 0;
          for (int64_t c0 = g0; c0 < g0 + group; c0 += 32) {
            const int64_t length = std::min<int64_t>(32, g0 + group - c0);
            int8_t q[32];
            quantize_token_int8(x_row + c0, length, scale, zero_point, q);
            sum += arrange_chunk_8da4w(q, length, arranged + c0);
          }
          correction[r * groups + g0 / group] = correction_8da4w(sum, zero_points[r], group);
        }
      }
    });
    parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
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
