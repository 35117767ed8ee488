// aten::linear.out: out = input @ weight^T + bias, for input [..., K],
// weight [N, K] and an optional bias that broadcasts to out [..., N].
//
// What nn.Linear exports to when the exporter keeps aten::linear whole (the
// default, EdgeCompileConfig.preserve_ops): the weight is read in its stored
// [N, K] layout, each output element the dot product of an input row and a
// weight row, so no transposed copy of the weight is ever made (the
// decomposed form, addmm(bias, x, permute_copy(weight)), copies every weight
// on every call).
//
// ATen semantics: input, weight, bias and out share one dtype (any real type
// but bool, as addmm); float16/bfloat16 accumulate and add the bias in
// float, rounding once; integers wrap. Any layouts of every operand.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Where bias[...] of out element (row, j) is: bias broadcast over out's
// shape [rows..., N], its strides 0 where it is broadcast.
class BiasOffsets {
 public:
  BiasOffsets() = default;  // No bias.
  BiasOffsets(const Tensor& bias, Span<const SizesType> out_sizes) {
    const size_t rank = out_sizes.size();
    const size_t lead = rank - bias.dim();
    for (size_t d = 0; d < bias.dim(); ++d) {
      if (bias.size(d) != 1) strides_[lead + d] = bias.strides()[d];
    }
    col_stride_ = rank == 0 ? 0 : strides_[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      sizes_[d] = out_sizes[d];
      rows_vary_ = rows_vary_ || strides_[d] != 0;
    }
    row_dims_ = rank == 0 ? 0 : rank - 1;
  }

  int64_t at(int64_t row, int64_t j) const {
    int64_t offset = j * col_stride_;
    if (!rows_vary_) return offset;  // The usual [N] bias.
    for (size_t d = row_dims_; d-- > 0;) {
      offset += (row % sizes_[d]) * strides_[d];
      row /= sizes_[d];
    }
    return offset;
  }

 private:
  int64_t sizes_[kMaxTensorDim] = {};
  int64_t strides_[kMaxTensorDim] = {};
  size_t row_dims_ = 0;
  int64_t col_stride_ = 0;
  bool rows_vary_ = false;
};

struct LinearArgs {
  explicit LinearArgs(Span<EValue*> args)
      : input{args[0]->to_tensor(), "input"},
        weight{args[1]->to_tensor(), "weight"},
        bias{args[2]->to_optional_tensor(), "bias"},
        out{args[3]->to_tensor(), "out"} {}
  NamedTensor input;
  NamedTensor weight;
  NamedTensor bias;  // Undefined: none.
  NamedTensor out;
};

// What the program fixes: ranks, dtypes, whether there is a bias. Checked
// at load by prepare, and on every call by the reference eval.
Status check_linear_call(const LinearArgs& a) {
  TL_CHECK_OR_RETURN(a.input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' is 0-d; it must have at least one dimension [..., K]");
  TL_RETURN_IF_ERROR(check_rank(a.weight, 2, "a matrix [N, K]"));
  const ScalarType dtype = a.input.tensor.scalar_type();
  if (!visit_real_type_no_bool(dtype, [](auto) {})) {
    return unsupported_dtype(a.input.name, dtype, kRealTypeNoBoolNames);
  }
  TL_RETURN_IF_ERROR(check_same_dtype(a.weight, dtype, "input"));
  if (a.bias.tensor.defined()) TL_RETURN_IF_ERROR(check_same_dtype(a.bias, dtype, "input"));
  return check_same_dtype(a.out, dtype, "input");
}

// Checks this run's shapes (after check_linear_call); writes out's shape
// ([..., N]) into `sizes`.
Status check_linear_shapes(const NamedTensor& input, const NamedTensor& weight,
                           const NamedTensor& bias, SizesType* sizes) {
  char have[128];
  char want[128];
  const size_t rank = input.tensor.dim();
  const SizesType k = input.tensor.size(rank - 1);
  TL_CHECK_OR_RETURN(weight.tensor.size(1) == k, Error::kInvalidArgument,
                     "argument 'input' of shape %s cannot be multiplied by argument 'weight' of "
                     "shape %s: input has %d features, weight expects %d",
                     format_sizes(input.tensor.sizes(), have, sizeof(have)),
                     format_sizes(weight.tensor.sizes(), want, sizeof(want)), k,
                     weight.tensor.size(1));
  for (size_t d = 0; d + 1 < rank; ++d) sizes[d] = input.tensor.size(d);
  sizes[rank - 1] = weight.tensor.size(0);
  const Span<const SizesType> out_sizes{sizes, rank};
  if (bias.tensor.defined() && !broadcasts_to(bias.tensor.sizes(), out_sizes)) {
    return Status::error(Error::kInvalidArgument,
                         "argument 'bias' of shape %s does not broadcast to the output shape %s",
                         format_sizes(bias.tensor.sizes(), have, sizeof(have)),
                         format_sizes(out_sizes, want, sizeof(want)));
  }
  TL_RETURN_IF_ERROR(check_has_data(input));
  TL_RETURN_IF_ERROR(check_has_data(weight));
  if (bias.tensor.defined()) TL_RETURN_IF_ERROR(check_has_data(bias));
  return Error::kOk;
}

// The product for this run's shapes, with every tensor of dtype CTYPE;
// after check_linear_call.
template <typename CTYPE>
void linear_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const LinearArgs call(args);
  const NamedTensor& input = call.input;
  const NamedTensor& bias = call.bias;
  const NamedTensor& out = call.out;
  SizesType out_sizes[kMaxTensorDim];
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_linear_shapes(input, call.weight, bias, out_sizes));
  const size_t rank = input.tensor.dim();
  const Span<const SizesType> shape{out_sizes, rank};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if (out.tensor.numel() == 0) return;

  const Tensor& x = input.tensor;
  const Tensor& w = call.weight.tensor;
  const int64_t k = x.size(rank - 1);
  const int64_t n = w.size(0);
  const int64_t rows = out.tensor.numel() / n;
  // The leading dimensions of input and out, walked as one row index.
  const LinearOffsets x_rows(x, 0, rank - 1);
  const LinearOffsets out_rows(out.tensor, 0, rank - 1);
  const int64_t x_k_stride = x.strides()[rank - 1];
  const int64_t out_n_stride = out.tensor.strides()[rank - 1];
  const bool has_bias = bias.tensor.defined();
  const BiasOffsets bias_at = has_bias ? BiasOffsets(bias.tensor, shape) : BiasOffsets();

  using Acc = opmath_t<CTYPE>;
  const CTYPE* x_data = x.const_data_ptr<CTYPE>();
  const CTYPE* b_data = has_bias ? bias.tensor.const_data_ptr<CTYPE>() : nullptr;
  CTYPE* c = out.tensor.mutable_data_ptr<CTYPE>();
  // weight^T as a [K, N] matrix: its columns are weight's rows.
  const MatrixView<CTYPE> wt{w.const_data_ptr<CTYPE>(), k, n, w.strides()[1], w.strides()[0]};
  auto store_row = [&](int64_t row_base) {
    return [&, row_base](int64_t i, int64_t j, Acc acc) {
      const int64_t row = row_base + i;
      if (b_data != nullptr) acc = opmath_add(acc, convert<Acc>(b_data[bias_at.at(row, j)]));
      c[out_rows.at(row) + j * out_n_stride] = convert<CTYPE>(acc);
    };
  };
  if (x_rows.collapsible()) {
    const MatrixView<CTYPE> a{x_data, rows, k, x_rows.stride(), x_k_stride};
    matmul_strided(a, wt, store_row(0));
    return;
  }
  // Leading dimensions that do not merge into one stride: a row at a time.
  for (int64_t row = 0; row < rows; ++row) {
    const MatrixView<CTYPE> a{x_data + x_rows.at(row), 1, k, 0, x_k_stride};
    matmul_strided(a, wt, store_row(row));
  }
}

}  // namespace

void linear_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_linear_call(LinearArgs(args)));
  TL_SWITCH_REAL_TYPES_NO_BOOL(args[0]->to_tensor().scalar_type(), ctx, "input", CTYPE,
                               [&] { linear_shaped<CTYPE>(ctx, args); });
}

// Ranks, dtypes and the bias's presence are the program's: checked at load,
// with the loop for the dtype picked there.
Status linear_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_linear_call(LinearArgs(args)));
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &linear_shaped<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
