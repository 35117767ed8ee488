// aten::stack.out: tensors of one shape joined along a new dimension `dim`
// (in [-rank - 1, rank]). The result dtype is the promotion of the inputs'
// and each input is converted to out's dtype, as for cat.

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

void stack_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};

  TL_KERNEL_CHECK(ctx, !tensors.empty(), Error::kInvalidArgument,
                  "argument 'tensors' is empty; expected a non-empty list of tensors");
  TL_KERNEL_CHECK(ctx, tensors.size() <= INT32_MAX, Error::kInvalidArgument,
                  "argument 'tensors' has too many tensors (%zu)", tensors.size());
  ResultType result_type;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TL_KERNEL_CHECK(ctx, t.defined(), Error::kInvalidArgument,
                    "argument 'tensors' has no tensor at position %zu", i);
    if (i > 0) {
      const Span<const SizesType> want = tensors[0].sizes();
      bool same = t.dim() == want.size();
      for (size_t d = 0; same && d < want.size(); ++d) same = t.size(d) == want[d];
      if (!same) {
        char have_text[128];
        char want_text[128];
        TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                        "argument 'tensors' has shape %s at position %zu but %s at position 0; "
                        "stack needs equal shapes",
                        format_sizes(t.sizes(), have_text, sizeof(have_text)), i,
                        format_sizes(want, want_text, sizeof(want_text)));
      }
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor({t, "tensors"}));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data({t, "tensors"}));
  }
  const size_t rank = tensors[0].dim();
  TL_KERNEL_CHECK(ctx, rank < kMaxTensorDim, Error::kInvalidArgument,
                  "the stacked tensors already have the most dimensions a tensor may have (%zu)",
                  kMaxTensorDim);
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), rank + 1, "dim", &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(result_type.get(), out));
  ShapeBuffer shape;
  shape.dim = rank + 1;
  for (size_t d = 0, s = 0; d <= rank; ++d) {
    shape.sizes[d] = d == dim ? static_cast<SizesType>(tensors.size()) : tensors[0].size(s++);
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  for (size_t i = 0; i < tensors.size(); ++i) {
    StridedView dst(out.tensor);
    dst.select(dim, static_cast<int64_t>(i));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, copy_view_converting(dst, out.tensor.scalar_type(), out.name, StridedView(tensors[i]),
                                  tensors[i].scalar_type(), "tensors"));
  }
}

namespace {

// The prepared eval: every tensor and out dense with out's dtype (checked
// at load), so each input's block for one outer index is one memcpy.
// Shapes and data are checked here, on every run; anything off goes to the
// reference, which reports it.
void stack_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const Tensor out = args[2]->to_tensor();
  const Tensor& first = tensors[0];
  const size_t rank = first.dim();
  size_t dim = 0;
  if (!view_gather::wrap(args[1]->to_int(), rank + 1, &dim)) return stack_out(ctx, args);
  const char* out_data = out.const_data_ptr<char>();
  for (const Tensor& t : tensors) {
    if (!dense_path::same_sizes(t, first)) return stack_out(ctx, args);
    if (t.numel() > 0 && (t.const_data_ptr() == nullptr || t.const_data_ptr() == out_data)) {
      return stack_out(ctx, args);
    }
  }
  SizesType shape[kMaxTensorDim];
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t d = 0, s = 0; d <= rank; ++d) {
    if (d == dim) {
      shape[d] = static_cast<SizesType>(tensors.size());
      continue;
    }
    shape[d] = first.size(s++);
    (d < dim ? outer : inner) *= shape[d];
  }
  if (!dense_copy::fit_sizes({shape, rank + 1}, out)) return stack_out(ctx, args);
  if (out.numel() > 0) {
    char* dst = out.mutable_data_ptr<char>();
    if (dst == nullptr) return stack_out(ctx, args);
    const size_t bytes = static_cast<size_t>(inner) * out.element_size();
    dense_copy::join_slabs(dst, tensors, outer, [bytes](const Tensor&) { return bytes; });
  }
  set_return(args, 3, *args[2]);
}

}  // namespace

// The tensors' dtypes and ranks, `dim` and out's dtype are the program's:
// checked at load with the reference's messages.
Status stack_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_CHECK_OR_RETURN(!tensors.empty(), Error::kInvalidArgument,
                     "argument 'tensors' is empty; expected a non-empty list of tensors");
  TL_CHECK_OR_RETURN(tensors.size() <= INT32_MAX, Error::kInvalidArgument,
                     "argument 'tensors' has too many tensors (%zu)", tensors.size());
  ResultType result_type;
  bool same_rank = true;
  bool dense = dense_path::is_dense(out.tensor);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TL_CHECK_OR_RETURN(t.defined(), Error::kInvalidArgument,
                       "argument 'tensors' has no tensor at position %zu", i);
    TL_RETURN_IF_ERROR(result_type.add_tensor({t, "tensors"}));
    same_rank = same_rank && t.dim() == tensors[0].dim();
    dense = dense && dense_path::is_dense(t) && t.scalar_type() == out.tensor.scalar_type();
  }
  if (!same_rank) return Error::kOk;  // The reference reports the shapes on the first run.
  const size_t rank = tensors[0].dim();
  TL_CHECK_OR_RETURN(rank < kMaxTensorDim, Error::kInvalidArgument,
                     "the stacked tensors already have the most dimensions a tensor may have (%zu)",
                     kMaxTensorDim);
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank + 1, "dim", &dim));
  TL_RETURN_IF_ERROR(check_out_dtype(result_type.get(), out));
  if (dense) call->eval = &stack_dense_eval;
  return Error::kOk;
}

}  // namespace torchlight::portable
