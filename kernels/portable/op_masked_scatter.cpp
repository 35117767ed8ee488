// aten::masked_scatter.out: self (broadcast with mask) with the positions
// where the bool mask is true filled, in row-major order, by consecutive
// elements of source (read in its own row-major order). source has self's
// dtype and at least as many elements as the mask has true values. Any
// dtype. The dtypes are checked at load; the installed eval checks a run's
// shapes and the mask's true count against source.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Memory offset of the row-major element `index` of `t`.
int64_t offset_of(const Tensor& t, int64_t index) {
  int64_t at = 0;
  for (size_t d = t.dim(); d-- > 0;) {
    at += (index % t.size(d)) * t.strides()[d];
    index /= t.size(d);
  }
  return at;
}

// What the program fixes: the mask's dtype, source's and out's (self's).
Status check_masked_scatter_fixed(Span<EValue*> args) {
  const ScalarType dtype = args[0]->to_tensor().scalar_type();
  const ScalarType mask_type = args[1]->to_tensor().scalar_type();
  TL_CHECK_OR_RETURN(mask_type == ScalarType::kBool, Error::kInvalidType,
                     "argument 'mask' has dtype %s; masked_scatter takes a bool mask",
                     to_string(mask_type));
  TL_RETURN_IF_ERROR(check_same_dtype({args[2]->to_tensor(), "source"}, dtype, "self"));
  return check_same_dtype({args[3]->to_tensor(), "out"}, dtype, "self");
}

// The broadcast, the copy and the scatter, after check_masked_scatter_fixed.
void masked_scatter_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mask{args[1]->to_tensor(), "mask"};
  const NamedTensor source{args[2]->to_tensor(), "source"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  BroadcastShape shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, compute_broadcast_shape(self, mask, &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(mask));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(source));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  StridedView from(self.tensor);
  from.broadcast_to(shape.span());
  copy_view(StridedView(out.tensor), from);
  StridedView mask_view(mask.tensor);
  mask_view.broadcast_to(shape.span());
  const char* mask_data = mask_view.first();
  const char* src = source.tensor.const_data_ptr<char>();
  char* dst = out.tensor.mutable_data_ptr<char>();
  const int64_t size = static_cast<int64_t>(out.tensor.element_size());
  const int64_t available = source.tensor.numel();
  int64_t taken = 0;
  for (CoordWalk w(shape.span()); !w.done(); w.next()) {
    int64_t mask_at = 0;
    for (size_t d = 0; d < shape.dim; ++d) mask_at += w[d] * mask_view.stride(d);
    if (mask_data[mask_at] == 0) continue;
    TL_KERNEL_CHECK(ctx, taken < available, Error::kInvalidArgument,
                    "argument 'source' has %lld elements, fewer than the true values of 'mask'",
                    static_cast<long long>(available));
    std::memcpy(dst + w.offset(out.tensor.strides()) * size,
                src + offset_of(source.tensor, taken) * size, static_cast<size_t>(size));
    ++taken;
  }
}

}  // namespace

void masked_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<3, &check_masked_scatter_fixed, &masked_scatter_shaped>(ctx, args);
}

Status masked_scatter_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_masked_scatter_fixed, &masked_scatter_shaped>(args, call);
}

}  // namespace torchlight::portable
