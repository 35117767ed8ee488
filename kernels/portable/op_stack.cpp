// aten::stack.out: tensors of one shape joined along a new dimension `dim`
// (in [-rank - 1, rank]). The result dtype is the promotion of the inputs'
// and each input is converted to out's dtype, as for cat.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

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

}  // namespace torchlight::portable
