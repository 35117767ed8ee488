// aten::split_with_sizes_copy.out: self cut along `dim` into pieces of the
// given sizes (which must add up to the dimension's size), one per out
// tensor. torch.export lowers split and chunk to this. The schema returns
// nothing, so args = [self, split_sizes, dim, out], and upstream appends a
// copy of the out list as the return. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/split_outs.h"

namespace torchlight::portable {

namespace {

// What the program fixes; checked at load by prepare, and on every call by
// the reference eval.
Status check_split_with_sizes_copy_out(Span<EValue*> args) {
  return check_split_call(args, 2, 3, "split");
}

// The pieces for this run's size of `dim`, and the copies; after
// check_split_with_sizes_copy_out.
void split_with_sizes_copy_out_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> sizes = args[1]->to_int_list();
  const Span<const Tensor> outs = args[3]->to_tensor_list();
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim", &dim));
  const int64_t size = self.tensor.size(dim);
  int64_t sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TL_KERNEL_CHECK(ctx, sizes[i] >= 0 && sizes[i] <= size - sum, Error::kInvalidArgument,
                    "argument 'split_sizes' has %lld at position %zu; the sizes must be "
                    "non-negative and add up to %lld (dimension %zu of 'self')",
                    static_cast<long long>(sizes[i]), i, static_cast<long long>(size), dim);
    sum += sizes[i];
  }
  TL_KERNEL_CHECK(ctx, sum == size, Error::kInvalidArgument,
                  "argument 'split_sizes' adds up to %lld, expected %lld (dimension %zu of 'self')",
                  static_cast<long long>(sum), static_cast<long long>(size), dim);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_list(outs, sizes.size()));
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, copy_slice_to_out(self, dim, start, sizes[i], false, outs[i], i));
    start += sizes[i];
  }
}

}  // namespace

void split_with_sizes_copy_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_split_with_sizes_copy_out(args));
  split_with_sizes_copy_out_shaped(ctx, args);
}

Status split_with_sizes_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_split_with_sizes_copy_out, &split_with_sizes_copy_out_shaped>(args, call);
}

}  // namespace torchlight::portable
