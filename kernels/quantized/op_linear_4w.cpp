// torchlight::linear_4w.out(Tensor input, Tensor weight, Tensor weight_scales,
//     int group_size, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)
//
// The fused form of the 4w (int4 weight-only, group-wise symmetric) linear,
// linear(x, dequantize_per_channel_group(weight, scales, zeros, -8, 7, int8,
// group_size, float32)): input float32 [..., K]; weight uint8 [N, K / 2]
// packed as linear_8da4w's (two values a byte, value + 8, element 2j in the
// high nibble); weight_scales float32 [N, K / group_size]; bias float32 [N]
// or none; out float32 [..., N]. The decomposed graph's arithmetic (each
// weight dequantized in float32, then a float dot product): the result
// differs from it only in summation order (linear_4w.h). Columns are split
// over the thread pool once per call (column_chunks.h); each chunk serves
// every row in blocks of four, reading each packed weight once per block.
// Prefill (at least kMinRowsDequantizedGemm rows) instead dequantizes the
// weight a panel at a time into scratch (8da4w's int4 conversion,
// prefill_8da4w.h) and runs the fp32 GEMM on it (dequantized_gemm.h).
#include <algorithm>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/linear_4w.h"
#include "kernels/quantized/prefill_8da4w.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/quantized/weight_only_gemm.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {


}  // namespace

Status linear_4w_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_packed_int4_linear(args));
  // Prefill-shaped calls (rows from the input's planned shape) get scratch
  // for the dequantized GEMM.
  const Tensor& weight = args[1]->to_tensor();
  const int64_t k = weight.size(1) * 2;
  call->scratch_bytes =
      weight_only_gemm_scratch_bytes(args[0]->to_tensor().numel() / k, k, weight.size(0));
  return Error::kOk;
}

void linear_4w_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_packed_int4_linear(args));
  const auto [input, weight, scales, bias, out] = PackedInt4LinearArgs(args);
  const int64_t k = input.tensor.size(input.tensor.dim() - 1);
  const int64_t n = weight.tensor.size(0);
  const int64_t group = args[3]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_linear_out(input, weight, scales, bias, out, n));
  const int64_t rows = input.tensor.numel() / k;
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  Rows4w base{};
  base.weight = weight.tensor.const_data_ptr<uint8_t>();
  base.w_scales = scales.tensor.const_data_ptr<float>();
  base.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
  base.k = k;
  base.group = group;
  base.n = n;
  const Int4Weights weights{base.weight, base.w_scales, k, group};
  const DequantizedGemm problem{x, rows, k, n, base.bias, y, select_dequantize_int4_rows(group),
                                &weights};
  Status gemm;
  if (run_weight_only_gemm(ctx, problem, &gemm)) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, gemm);
    set_return(args, 6, *args[5]);
    return;
  }
  const Columns4wFn columns = select_linear_4w(group);
  // One job for all rows: each chunk of columns serves every block of rows
  // while its weights are in cache.
  parallel_column_chunks(n, rows, k, [&](int64_t n_begin, int64_t n_end) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRows4w) {
      Rows4w block = base;
      block.x = x + r0 * k;
      block.rows = static_cast<int>(std::min<int64_t>(kRows4w, rows - r0));
      block.out = y + r0 * n;
      columns(block, n_begin, n_end);
    }
  });
  set_return(args, 6, *args[5]);
}

}  // namespace torchlight::quantized
