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
// and runs the fp32 GEMM on it (dequantized_gemm.h).
#include <algorithm>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/linear_int8.h"
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

}  // namespace

Status linear_int8_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static(args));
  // Prefill-shaped calls (rows from the input's planned shape) get scratch
  // for the dequantized GEMM.
  const Tensor& weight = args[1]->to_tensor();
  const int64_t k = weight.size(1);
  call->scratch_bytes =
      weight_only_gemm_scratch_bytes(args[0]->to_tensor().numel() / k, k, weight.size(0));
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
