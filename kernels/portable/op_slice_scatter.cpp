// aten::slice_scatter.out and aten::select_scatter.out: out = self with
// one slice (start:end:step along dim, ATen's clamping) or one index along
// dim replaced by src. src must have exactly that slice's shape and is
// converted to self's dtype, as ATen's copy_ does. out may be self itself
// (a mutable buffer updated in place, util/in_place.h): then only the
// slice is written. self's rank, dim and out's dtype are checked at load;
// the installed eval checks a run's slice bounds and src's shape.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// out = self, then the part of out that `region` (a view of out) covers = src.
Status scatter_region(const NamedTensor& self, const NamedTensor& src, const NamedTensor& out,
                      const StridedView& region) {
  bool same = region.dim() == src.tensor.dim();
  for (size_t d = 0; same && d < region.dim(); ++d) same = region.size(d) == src.tensor.size(d);
  if (!same) {
    SizesType sizes[kMaxTensorDim];
    region.sizes(sizes);
    char want[128];
    char have[128];
    return Status::error(Error::kInvalidArgument,
                         "argument 'src' has shape %s, expected %s (the shape of the slice of "
                         "'self' it replaces)",
                         format_sizes(src.tensor.sizes(), have, sizeof(have)),
                         format_sizes({sizes, region.dim()}, want, sizeof(want)));
  }
  TL_RETURN_IF_ERROR(check_has_data(src));
  TL_RETURN_IF_ERROR(copy_reshape_to_out(self, StridedView(self.tensor), out));
  return copy_view_converting(region, out.tensor.scalar_type(), out.name,
                              StridedView(src.tensor), src.tensor.scalar_type(), src.name);
}

// What the program fixes (out at args[out_index]): self has a dimension,
// dim is one of them, out has self's dtype. `what` names the operation.
Status check_scatter_dim_fixed(Span<EValue*> args, size_t out_index, const char* what) {
  const Tensor self = args[0]->to_tensor();
  TL_CHECK_OR_RETURN(self.dim() > 0, Error::kInvalidArgument,
                     "argument 'self' is 0-d; %s needs at least one dimension", what);
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[2]->to_int(), self.dim(), "dim", &dim));
  return check_same_dtype({args[out_index]->to_tensor(), "out"}, self.scalar_type(), "self");
}

// slice_scatter: self, src, dim, start, end, step, out, out.
Status check_slice_scatter_fixed(Span<EValue*> args) {
  return check_scatter_dim_fixed(args, 6, "slice");
}

void slice_scatter_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 7, *args[6]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor src{args[1]->to_tensor(), "src"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim", &dim));
  int64_t start = 0;
  int64_t length = 0;
  const int64_t step = args[5]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, normalize_slice(*args[3], *args[4], step, self.tensor.size(dim), &start, &length));
  // Resize first: the region is a view of out, so it needs out's final strides.
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  StridedView region(out.tensor);
  region.narrow(dim, start, length, step);
  TL_KERNEL_RETURN_IF_ERROR(ctx, scatter_region(self, src, out, region));
}

// select_scatter: self, src, dim, index, out, out.
Status check_select_scatter_fixed(Span<EValue*> args) {
  return check_scatter_dim_fixed(args, 4, "select");
}

void select_scatter_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor src{args[1]->to_tensor(), "src"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim", &dim));
  int64_t index = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_index_value(args[3]->to_int(), self.tensor.size(dim), dim,
                                                   /*allow_negative=*/true, "index", &index));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  StridedView region(out.tensor);
  region.select(dim, index);
  TL_KERNEL_RETURN_IF_ERROR(ctx, scatter_region(self, src, out, region));
}

}  // namespace

void slice_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<6, &check_slice_scatter_fixed, &slice_scatter_shaped>(ctx, args);
}

Status slice_scatter_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_slice_scatter_fixed, &slice_scatter_shaped>(args, call);
}

void select_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<4, &check_select_scatter_fixed, &select_scatter_shaped>(ctx, args);
}

Status select_scatter_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_select_scatter_fixed, &select_scatter_shaped>(args, call);
}

}  // namespace torchlight::portable
