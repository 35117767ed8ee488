// aten::copy.out: self.copy_(src) as a new tensor: self's shape, with src
// broadcast to it and converted to self's dtype, which out must have.
// self's values are not read, only its shape.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor src{args[1]->to_tensor(), "src"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  if (!broadcasts_to(src.tensor.sizes(), self.tensor.sizes())) {
    char have[128];
    char want[128];
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'src' with shape %s does not broadcast to the shape %s of 'self'",
                    format_sizes(src.tensor.sizes(), have, sizeof(have)),
                    format_sizes(self.tensor.sizes(), want, sizeof(want)));
  }
  // ATen's out variant gives out self's dtype; src converts to it.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(src));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  StridedView view(src.tensor);
  view.broadcast_to(self.tensor.sizes());
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, copy_view_converting(StridedView(out.tensor), out.tensor.scalar_type(), out.name, view,
                                src.tensor.scalar_type(), src.name));
}

}  // namespace torchlight::portable
