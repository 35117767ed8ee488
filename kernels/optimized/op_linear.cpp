// aten::linear.out for float32: out = input @ weight^T + bias on gemm, the
// weight [out_features, in_features] read in place (gemm's "NT" form: the
// matrix-vector path for decode, packed panels for prefill).
//
// ATen semantics: input [..., in] gives out [..., out_features]; a 1-D
// weight [in] gives out [...] (a dot product per row); bias, when given,
// broadcasts to out's shape; input, weight, bias and out share one dtype.
// The leading dims of input and out are folded into the rows of one
// product; layouts where they cannot fold run one row at a time.
#include <cstdint>

#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/util/gemm_scratch.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/util/matrix_layout.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::optimized {

namespace {

using portable::NamedTensor;

// The offset of row `row` (row-major over sizes[0, count)) with `strides`.
int64_t row_offset(int64_t row, Span<const SizesType> sizes, const int64_t* strides,
                   size_t count) {
  int64_t offset = 0;
  for (size_t d = count; d-- > 0;) {
    offset += (row % sizes[d]) * strides[d];
    row /= sizes[d];
  }
  return offset;
}

Status check_linear_operands(const NamedTensor& input, const NamedTensor& weight,
                             const NamedTensor* bias, const NamedTensor& out) {
  char a[128];
  char b[128];
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least 1 dimension, got shape %s",
                     format_sizes(input.tensor.sizes(), a, sizeof(a)));
  TL_CHECK_OR_RETURN(weight.tensor.dim() == 1 || weight.tensor.dim() == 2, Error::kInvalidArgument,
                     "argument 'weight' must be a matrix [out_features, in_features] or a vector "
                     "[in_features], got shape %s (%zu-D)",
                     format_sizes(weight.tensor.sizes(), a, sizeof(a)), weight.tensor.dim());
  TL_CHECK_OR_RETURN(input.tensor.scalar_type() == ScalarType::kFloat, Error::kInvalidType,
                     "argument 'input' has dtype %s; the optimized linear kernel takes float32 only",
                     to_string(input.tensor.scalar_type()));
  TL_RETURN_IF_ERROR(portable::check_same_dtype(weight, ScalarType::kFloat, "input"));
  if (bias != nullptr) TL_RETURN_IF_ERROR(portable::check_same_dtype(*bias, ScalarType::kFloat, "input"));
  TL_RETURN_IF_ERROR(portable::check_same_dtype(out, ScalarType::kFloat, "input"));
  const SizesType in_features = input.tensor.size(input.tensor.dim() - 1);
  const SizesType weight_features = weight.tensor.size(weight.tensor.dim() - 1);
  TL_CHECK_OR_RETURN(in_features == weight_features, Error::kInvalidArgument,
                     "argument 'input' of shape %s cannot be multiplied by argument 'weight' of "
                     "shape %s: %d input features vs %d",
                     format_sizes(input.tensor.sizes(), a, sizeof(a)),
                     format_sizes(weight.tensor.sizes(), b, sizeof(b)), in_features,
                     weight_features);
  TL_RETURN_IF_ERROR(portable::check_has_data(input));
  TL_RETURN_IF_ERROR(portable::check_has_data(weight));
  if (bias != nullptr) TL_RETURN_IF_ERROR(portable::check_has_data(*bias));
  return Error::kOk;
}

}  // namespace

void linear_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 4, *args[3]);
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const bool has_bias = args[2]->is_tensor() && args[2]->to_tensor().defined();
  const NamedTensor bias{has_bias ? args[2]->to_tensor() : Tensor(), "bias"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, check_linear_operands(input, weight, has_bias ? &bias : nullptr, out));

  // out: input's leading dims, then out_features unless weight is a vector.
  const Tensor& x = input.tensor;
  const Tensor& w = weight.tensor;
  const size_t lead = x.dim() - 1;
  const bool matrix_weight = w.dim() == 2;
  SizesType out_sizes[kMaxTensorDim];
  for (size_t d = 0; d < lead; ++d) out_sizes[d] = x.size(d);
  if (matrix_weight) out_sizes[lead] = w.size(0);
  const Span<const SizesType> out_shape(out_sizes, lead + (matrix_weight ? 1 : 0));
  if (has_bias && !portable::broadcasts_to(bias.tensor.sizes(), out_shape)) {
    char have[128];
    char want[128];
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'bias' of shape %s does not broadcast to the output's shape %s",
                    format_sizes(bias.tensor.sizes(), have, sizeof(have)),
                    format_sizes(out_shape, want, sizeof(want)));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, out_shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));

  const int64_t n = matrix_weight ? w.size(0) : 1;
  const int64_t k = x.size(lead);
  int64_t m = 1;
  for (size_t d = 0; d < lead; ++d) m *= x.size(d);
  if (m == 0 || n == 0) return;

  GemmProblem p;
  p.workspace = gemm_workspace(ctx);
  p.m = m;
  p.n = n;
  p.k = k;
  // B[p][j] = weight[j][p]: the weight's rows are B's columns.
  p.b = matrix_weight ? ConstMatrix{w.const_data_ptr<float>(), w.strides()[1], w.strides()[0]}
                      : ConstMatrix{w.const_data_ptr<float>(), w.strides()[0], 0};
  p.c = out.tensor.mutable_data_ptr<float>();
  int64_t bias_strides[kMaxTensorDim] = {};
  if (has_bias) {
    broadcast_strides(bias.tensor, out_shape, bias_strides);
    p.beta = 1.0f;
  }
  const int64_t x_col_stride = x.strides()[lead];
  const int64_t out_col_stride = matrix_weight ? out.tensor.strides()[lead] : 1;
  const int64_t bias_col_stride = matrix_weight ? bias_strides[lead] : 0;

  // One product when input's, out's and bias's leading dims fold into rows.
  int64_t x_rs = 0;
  int64_t out_rs = 0;
  int64_t bias_rs = 0;
  const bool x_folds = fold_leading_dims(x.sizes(), x.strides(), lead, &x_rs);
  const bool out_folds = fold_leading_dims(out.tensor.sizes(), out.tensor.strides(), lead, &out_rs);
  const bool bias_folds =
      !has_bias ||
      fold_leading_dims(out_shape, Span<const int64_t>(bias_strides, out_shape.size()), lead,
                        &bias_rs);
  const bool out_rows_ok = (n == 1 || out_col_stride == 1) && (m == 1 || out_rs >= n);
  if (x_folds && out_folds && bias_folds && out_rows_ok) {
    p.a = ConstMatrix{x.const_data_ptr<float>(), x_rs, x_col_stride};
    p.ldc = m == 1 ? n : out_rs;
    if (has_bias) p.addend = ConstMatrix{bias.tensor.const_data_ptr<float>(), bias_rs, bias_col_stride};
    TL_KERNEL_RETURN_IF_ERROR(ctx, gemm(p));
    return;
  }

  // Unusual layouts: one row at a time, out's row through a unit-stride
  // view when its columns are contiguous, else element by element (n
  // products of one column).
  const Span<const int64_t> out_strides = out.tensor.strides();
  for (int64_t row = 0; row < m; ++row) {
    GemmProblem r = p;
    r.m = 1;
    r.a = ConstMatrix{x.const_data_ptr<float>() + row_offset(row, x.sizes(), x.strides().data(), lead),
                      0, x_col_stride};
    float* c_row = p.c + row_offset(row, out.tensor.sizes(), out_strides.data(), lead);
    const float* bias_row =
        has_bias ? bias.tensor.const_data_ptr<float>() +
                       row_offset(row, out_shape, bias_strides, lead)
                 : nullptr;
    if (n == 1 || out_col_stride == 1) {
      r.c = c_row;
      r.ldc = n;
      if (has_bias) r.addend = ConstMatrix{bias_row, 0, bias_col_stride};
      TL_KERNEL_RETURN_IF_ERROR(ctx, gemm(r));
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      GemmProblem e = r;
      e.n = 1;
      e.b.data = p.b.data + j * p.b.col_stride;
      e.c = c_row + j * out_col_stride;
      e.ldc = 1;
      if (has_bias) e.addend = ConstMatrix{bias_row + j * bias_col_stride, 0, 0};
      TL_KERNEL_RETURN_IF_ERROR(ctx, gemm(e));
    }
  }
}

}  // namespace torchlight::optimized
