// aten::_to_copy.out: self converted to out's dtype (ATen's static_cast
// conversions: to bool is != 0, floats to integers truncate, float16 and
// bfloat16 round to nearest even) and laid out in out's dim order, which is
// how memory_format reaches the runtime (see util/memory_format.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_convert.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/memory_format.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void to_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[2], out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, copy_view_converting(StridedView(out.tensor), out.tensor.scalar_type(), out.name,
                                StridedView(self.tensor), self.tensor.scalar_type(), self.name));
}

// The memory format and the dtypes are the program's: checked at load.
// Without a dtype change the copy moves bytes (dense_copy.h); with one, a
// loop for that dtype pair converts (dense_convert.h).
Status to_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_memory_format(*args[2], {args[3]->to_tensor(), "out"}));
  if (args[3]->to_tensor().scalar_type() == args[0]->to_tensor().scalar_type()) {
    call->eval = &dense_copy::same_shape_copy_eval<3, &to_copy_out>;
    return Error::kOk;
  }
  return dense_convert::prepare<3, &to_copy_out>(args, call);
}

}  // namespace torchlight::portable
