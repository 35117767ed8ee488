// aten::permute_copy.out: out = self.permute(dims), copied into out's own
// layout. Any dtype (bytes are moved, not converted).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/permute_copy_prepare.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

void permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};

  const size_t rank = self.tensor.dim();
  TL_KERNEL_CHECK(ctx, dims.size() == rank, Error::kInvalidArgument,
                  "argument 'dims' has %zu entries, expected %zu (the rank of 'self')",
                  dims.size(), rank);
  size_t order[kMaxTensorDim];
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; i < rank; ++i) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(dims[i], rank, "dims", &order[i]));
    TL_KERNEL_CHECK(ctx, !seen[order[i]], Error::kInvalidArgument,
                    "argument 'dims' repeats dimension %zu; it must be a permutation", order[i]);
    seen[order[i]] = true;
  }
  StridedView view(self.tensor);
  view.permute(order);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

Status permute_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return permute_copy::prepare<&permute_copy_out>(args, call);
}

}  // namespace torchlight::portable
