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
// rounding. Rows go in blocks of four (each unpacked weight vector serves
// the block); columns are split over the thread pool; the inner loop is AVX2
// where the CPU has it (linear_8da4w.h).
#include <algorithm>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/per_token_qparams.h"
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
  TL_RETURN_IF_ERROR(check_quantized_linear(input, weight, ScalarType::kByte,
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

constexpr int64_t kColumnsPerChunk = 16;

}  // namespace

Status linear_8da4w_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static(args));
  // A block of quantized activation rows (K bytes each; K from the
  // weight's fixed shape).
  call->scratch_bytes = static_cast<size_t>(args[1]->to_tensor().size(1)) * 2 * kRows8da4w;
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
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d + 1 < dim; ++d) sizes[d] = input.tensor.size(d);
  sizes[dim - 1] = static_cast<SizesType>(n);
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, {sizes, dim}));
  for (const NamedTensor* t : {&input, &weight, &scales, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(*t));
  }
  if (bias.tensor.defined()) TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(bias));
  const size_t block_bytes = static_cast<size_t>(k) * kRows8da4w;
  int8_t* xq = static_cast<int8_t*>(ctx.scratch());
  if (xq == nullptr || ctx.scratch_bytes() < block_bytes) {
    xq = static_cast<int8_t*>(ctx.allocate_temp(block_bytes, 64));
  }
  TL_KERNEL_CHECK(ctx, xq != nullptr, Error::kMemoryAllocationFailed,
                  "no scratch memory for %d quantized rows of %lld values", kRows8da4w,
                  static_cast<long long>(k));
  const int64_t group = args[3]->to_int();
  const Columns8da4wFn columns = select_linear_8da4w(group);
  const int64_t rows = k == 0 ? 0 : input.tensor.numel() / k;
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  const size_t chunks = static_cast<size_t>((n + kColumnsPerChunk - 1) / kColumnsPerChunk);
  for (int64_t r0 = 0; r0 < rows; r0 += kRows8da4w) {
    Row8da4w block{};
    block.xq = xq;
    block.rows = static_cast<int>(std::min<int64_t>(kRows8da4w, rows - r0));
    block.weight = weight.tensor.const_data_ptr<uint8_t>();
    block.w_scales = scales.tensor.const_data_ptr<float>();
    block.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
    block.k = k;
    block.n = n;
    block.group = group;
    block.out = y + r0 * n;
    for (int r = 0; r < block.rows; ++r) {
      const float* x_row = x + (r0 + r) * k;
      double scale = 0;
      int64_t zero_point = 0;
      token_qparams(x_row, k, &scale, &zero_point);
      quantize_token_int8(x_row, k, scale, zero_point, xq + r * k);
      block.zero_point[r] = static_cast<int32_t>(zero_point);
      block.scale[r] = static_cast<float>(scale);
    }
    threadpool::parallel_for(chunks, 1, [&](size_t begin, size_t end) {
      const int64_t n_begin = static_cast<int64_t>(begin) * kColumnsPerChunk;
      const int64_t n_end = std::min<int64_t>(static_cast<int64_t>(end) * kColumnsPerChunk, n);
      columns(block, n_begin, n_end);
    });
  }
  set_return(args, 6, *args[5]);
}

}  // namespace torchlight::quantized
