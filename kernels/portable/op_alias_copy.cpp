// Copies of self with the same shape and dtype: aten::alias_copy.out,
// aten::detach_copy.out and aten::lift_fresh_copy.out (the *_copy forms of
// alias, detach and lift_fresh, which torch.export leaves for constants and
// views). out keeps its own dim order. Any dtype. Nothing is copied when
// out shares self's memory (a copy-free alias, util/in_place.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

namespace {

void copy_self(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_reshape_to_out(self, StridedView(self.tensor), out));
}

}  // namespace

void alias_copy_out(KernelContext& ctx, Span<EValue*> args) { copy_self(ctx, args); }
void detach_copy_out(KernelContext& ctx, Span<EValue*> args) { copy_self(ctx, args); }
void lift_fresh_copy_out(KernelContext& ctx, Span<EValue*> args) { copy_self(ctx, args); }

namespace {

// out's dtype is checked at load; the eval only resizes and moves bytes.
template <KernelFunction reference>
Status prepare_copy_self(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 1));
  call->eval = &dense_copy::same_shape_copy_eval<1, reference>;
  return Error::kOk;
}

}  // namespace

Status alias_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_copy_self<&alias_copy_out>(args, call);
}
Status detach_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_copy_self<&detach_copy_out>(args, call);
}
Status lift_fresh_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_copy_self<&lift_fresh_copy_out>(args, call);
}

}  // namespace torchlight::portable
