// aten::gather.out: out[i][j][k] = self[i][index[i][j][k]][k] (for dim 1),
// out having index's shape. index is int64 with self's rank; outside `dim`
// it may not be larger than self; every value must be in [0, self.size(dim))
// and is checked before it is used. Any dtype.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/scatter_gather.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void gather_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor index{args[2]->to_tensor(), "index"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scatter_gather_shapes(self, dim, index, nullptr));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, index.tensor.sizes()));
  if (index.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(index));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  const int64_t size = static_cast<int64_t>(self.tensor.element_size());
  const char* from = self.tensor.const_data_ptr<char>();
  char* to = out.tensor.mutable_data_ptr<char>();
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, for_each_scatter_gather(self.tensor, dim, index.tensor, out.tensor,
                                   [&](int64_t self_at, int64_t out_at) {
                                     std::memcpy(to + out_at * size, from + self_at * size,
                                                 static_cast<size_t>(size));
                                   }));
}

// `dim`, index's dtype and out's dtype are the program's: checked at load,
// with the reference's messages. The shapes and index values may change
// with dynamic dims, so the reference eval keeps checking those.
Status gather_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  TL_RETURN_IF_ERROR(check_index_dtype({args[2]->to_tensor(), "index"}, /*allow_int32=*/false));
  return check_same_dtype({args[4]->to_tensor(), "out"}, self.tensor.scalar_type(), "self");
}

}  // namespace torchlight::portable
