// aten::cat.out: the tensors joined along `dim`. ATen's rules: every tensor
// has the same rank and the same sizes outside `dim`, except that 1-D
// tensors of shape [0] are skipped (a legacy rule); 0-d tensors are an
// error; the result dtype is the promotion of all input dtypes and each
// input is converted to out's dtype.

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

namespace {

bool is_skipped(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

}  // namespace

void cat_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};

  TL_KERNEL_CHECK(ctx, !tensors.empty(), Error::kInvalidArgument,
                  "argument 'tensors' is empty; expected a non-empty list of tensors");
  ResultType result_type;
  const Tensor* reference = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TL_KERNEL_CHECK(ctx, t.defined(), Error::kInvalidArgument,
                    "argument 'tensors' has no tensor at position %zu", i);
    TL_KERNEL_CHECK(ctx, t.dim() > 0, Error::kInvalidArgument,
                    "argument 'tensors' has a 0-d tensor at position %zu, which cannot be "
                    "concatenated",
                    i);
    TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor({t, "tensors"}));
    if (reference == nullptr && !is_skipped(t)) reference = &t;
  }
  const ScalarType common = result_type.get();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  if (reference == nullptr) {
    // Only [0]-shaped tensors: the result is one too.
    const SizesType empty[] = {0};
    TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, empty));
    return;
  }
  const size_t rank = reference->dim();
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), rank, "dim", &dim));
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_skipped(t)) continue;
    TL_KERNEL_CHECK(ctx, t.dim() == rank, Error::kInvalidArgument,
                    "argument 'tensors' has a %zu-D tensor at position %zu, but the first "
                    "non-skipped one is %zu-D; ranks must match",
                    t.dim(), i, rank);
    for (size_t d = 0; d < rank; ++d) {
      TL_KERNEL_CHECK(ctx, d == dim || t.size(d) == reference->size(d), Error::kInvalidArgument,
                      "argument 'tensors' has size %d at dimension %zu for the tensor at position "
                      "%zu, expected %d (sizes must match except in dimension %zu)",
                      t.size(d), d, i, reference->size(d), dim);
    }
    total += t.size(dim);
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data({t, "tensors"}));
  }
  TL_KERNEL_CHECK(ctx, total <= INT32_MAX, Error::kInvalidArgument,
                  "the concatenated size %lld along dimension %zu is too large",
                  static_cast<long long>(total), dim);
  ShapeBuffer shape;
  shape.dim = rank;
  for (size_t d = 0; d < rank; ++d) shape.sizes[d] = reference->size(d);
  shape.sizes[dim] = static_cast<SizesType>(total);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if (is_skipped(t)) continue;
    StridedView dst(out.tensor);
    dst.narrow(dim, at, t.size(dim));
    at += t.size(dim);
    TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_converting(dst, out.tensor.scalar_type(), out.name,
                                                        StridedView(t), t.scalar_type(),
                                                        "tensors"));
  }
}

namespace {

// The prepared eval: every tensor and out dense with out's dtype (checked
// at load), so each input's block for one outer index is one memcpy.
// Sizes, the concatenated length and data are checked here, on every run;
// anything off goes to the reference, which reports it.
void cat_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const Tensor out = args[2]->to_tensor();
  const Tensor& first = tensors[0];
  const size_t rank = first.dim();
  size_t dim = 0;
  if (!view_gather::wrap(args[1]->to_int(), rank, &dim)) return cat_out(ctx, args);
  const char* out_data = out.const_data_ptr<char>();
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    for (size_t d = 0; d < rank; ++d) {
      if (d != dim && t.size(d) != first.size(d)) return cat_out(ctx, args);
    }
    if (t.numel() > 0 && (t.const_data_ptr() == nullptr || t.const_data_ptr() == out_data)) {
      return cat_out(ctx, args);
    }
    total += t.size(dim);
  }
  if (total > INT32_MAX) return cat_out(ctx, args);
  SizesType shape[kMaxTensorDim];
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = first.size(d);
    if (d < dim) outer *= shape[d];
    if (d > dim) inner *= shape[d];
  }
  shape[dim] = static_cast<SizesType>(total);
  if (!dense_copy::fit_sizes({shape, rank}, out)) return cat_out(ctx, args);
  if (out.numel() > 0) {
    char* dst = out.mutable_data_ptr<char>();
    if (dst == nullptr) return cat_out(ctx, args);
    const int64_t row = inner * static_cast<int64_t>(out.element_size());
    dense_copy::join_slabs(dst, tensors, outer, [&](const Tensor& t) {
      return static_cast<size_t>(t.size(dim) * row);
    });
  }
  set_return(args, 3, *args[2]);
}

}  // namespace

// The tensors' dtypes and ranks, `dim` and out's dtype are the program's:
// checked at load with the reference's messages (dim only when no 1-D
// tensor may be skipped).
Status cat_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Span<const Tensor> tensors = args[0]->to_tensor_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_CHECK_OR_RETURN(!tensors.empty(), Error::kInvalidArgument,
                     "argument 'tensors' is empty; expected a non-empty list of tensors");
  ResultType result_type;
  bool same_rank = true;
  bool dense = dense_path::is_dense(out.tensor);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TL_CHECK_OR_RETURN(t.defined(), Error::kInvalidArgument,
                       "argument 'tensors' has no tensor at position %zu", i);
    TL_CHECK_OR_RETURN(t.dim() > 0, Error::kInvalidArgument,
                       "argument 'tensors' has a 0-d tensor at position %zu, which cannot be "
                       "concatenated",
                       i);
    TL_RETURN_IF_ERROR(result_type.add_tensor({t, "tensors"}));
    same_rank = same_rank && t.dim() == tensors[0].dim();
    dense = dense && dense_path::is_dense(t) && t.scalar_type() == out.tensor.scalar_type();
  }
  TL_RETURN_IF_ERROR(check_out_dtype(result_type.get(), out));
  if (!same_rank) return Error::kOk;  // 1-D [0] tensors are skipped: the reference decides.
  if (tensors[0].dim() > 1) {
    size_t dim = 0;
    TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), tensors[0].dim(), "dim", &dim));
  }
  if (dense) call->eval = &cat_dense_eval;
  return Error::kOk;
}

}  // namespace torchlight::portable
