// aten::clone.out: a copy of self, same dtype and shape. memory_format is
// not needed at run time: the exporter gave out the dim order the format
// asks for (contiguous, channels-last, or self's when preserved), and the
// copy writes through out's own strides. When out shares self's memory
// (the exporter planned the clone of an intermediate in place,
// util/in_place.h) nothing is copied.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/memory_format.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void clone_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_reshape_to_out(self, StridedView(self.tensor), out));
}

// The memory format and out's dtype are the program's: checked at load.
Status clone_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_memory_format(*args[1], {args[2]->to_tensor(), "out"}));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::same_shape_copy_eval<2, &clone_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
