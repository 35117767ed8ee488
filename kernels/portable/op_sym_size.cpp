// Tensor-to-value ops, for programs with symbolic (dynamic) shapes and
// data-dependent scalars: aten::sym_size.int(self, dim),
// aten::sym_stride.int(self, dim), aten::sym_numel(self),
// aten::sym_storage_offset(self) (always 0: tensors here own their start)
// and aten::_local_scalar_dense(self) (Tensor.item(): Int, Double or Bool
// by dtype). They return a value, not a tensor: args = [self, (dim,)
// return], and the kernel overwrites the return slot.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/element_scalar.h"
#include "kernels/portable/util/kernel_args.h"

namespace torchlight::portable {

void sym_size_int(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  TL_KERNEL_CHECK(ctx, self.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; it has no dimension to take the size of");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  set_return(args, 2, EValue(static_cast<int64_t>(self.size(dim))));
}

void sym_stride_int(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  TL_KERNEL_CHECK(ctx, self.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; it has no dimension to take the stride of");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  set_return(args, 2, EValue(static_cast<int64_t>(self.strides()[dim])));
}

void sym_storage_offset(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 1, EValue(int64_t{0}));
}

void local_scalar_dense(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  TL_KERNEL_CHECK(ctx, self.tensor.numel() == 1, Error::kInvalidArgument,
                  "argument 'self' has %lld elements; only a one-element tensor is a Scalar",
                  static_cast<long long>(self.tensor.numel()));
  EValue value;
  TL_KERNEL_RETURN_IF_ERROR(ctx, element_to_scalar(self, 0, &value));
  set_return(args, 1, value);
}

void sym_numel(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 1, EValue(args[0]->to_tensor().numel()));
}

}  // namespace torchlight::portable
