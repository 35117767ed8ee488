// aten::copy.out: self.copy_(src) as a new tensor: self's shape, with src
// broadcast to it and converted to self's dtype, which out must have.
// self's values are not read, only its shape. Out's dtype is checked at
// load; the prepared eval checks only the broadcast of this run's shapes.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// The broadcast (which a run's shapes decide), the resize and the
// converting copy; out's dtype was checked already.
void copy_shaped(KernelContext& ctx, Span<EValue*> args) {
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
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(src));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  StridedView view(src.tensor);
  view.broadcast_to(self.tensor.sizes());
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, copy_view_converting(StridedView(out.tensor), out.tensor.scalar_type(), out.name, view,
                                src.tensor.scalar_type(), src.name));
}

// ATen's out variant gives out self's dtype; src converts to it.
Status check_copy_dtypes(Span<EValue*> args) {
  const NamedTensor out{args[3]->to_tensor(), "out"};
  return check_same_dtype(out, args[0]->to_tensor().scalar_type(), "self");
}

}  // namespace

void copy_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<3, &check_copy_dtypes, &copy_shaped>(ctx, args);
}

Status copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_copy_dtypes, &copy_shaped>(args, call);
}

}  // namespace torchlight::portable
