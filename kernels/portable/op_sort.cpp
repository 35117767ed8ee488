// aten::sort.values and aten::sort.values_stable: the elements of each
// slice along `dim` in ascending (or descending) order, with the positions
// they came from. NaN sorts above every number. The sort is always stable
// (equal values keep their order), which is what `stable` asks for and a
// valid answer when it does not. Every real dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/sort_order.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

void sort_impl(KernelContext& ctx, const NamedTensor& self, int64_t dim_arg, bool descending,
               const NamedTensor& values, const NamedTensor& indices) {
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(dim_arg, self.tensor.dim(), "dim", &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(values, self.tensor.scalar_type(), "self"));
  TL_KERNEL_CHECK(ctx, indices.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                  "argument 'indices' has dtype %s, expected int64",
                  to_string(indices.tensor.scalar_type()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(values, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, self.tensor.sizes()));
  if (self.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(values));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(indices));

  const bool scalar = self.tensor.dim() == 0;
  const int64_t n = scalar ? 1 : self.tensor.size(dim);
  // Every slice: the shape with `dim` collapsed to 1.
  ShapeBuffer slices;
  slices.dim = self.tensor.dim();
  for (size_t d = 0; d < slices.dim; ++d) slices.sizes[d] = d == dim ? 1 : self.tensor.size(d);
  const int64_t self_stride = scalar ? 1 : self.tensor.strides()[dim];
  const int64_t values_stride = scalar ? 1 : values.tensor.strides()[dim];
  const int64_t indices_stride = scalar ? 1 : indices.tensor.strides()[dim];
  TL_SWITCH_REAL_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    constexpr int64_t kSize = sizeof(CTYPE);
    for (CoordWalk w(slices.span()); !w.done(); w.next()) {
      const StridedSlice<CTYPE> in{
          self.tensor.mutable_data_ptr<char>() + w.offset(self.tensor.strides()) * kSize,
          self_stride};
      const StridedSlice<CTYPE> out{
          values.tensor.mutable_data_ptr<char>() + w.offset(values.tensor.strides()) * kSize,
          values_stride};
      const StridedSlice<int64_t> perm{
          indices.tensor.mutable_data_ptr<char>() + w.offset(indices.tensor.strides()) * 8,
          indices_stride};
      sort_positions(perm, n, SortOrder<CTYPE>(in, descending));
      for (int64_t i = 0; i < n; ++i) out.set(i, in.get(perm.get(i)));
    }
  });
}

}  // namespace

void sort_values(KernelContext& ctx, Span<EValue*> args) {
  sort_impl(ctx, {args[0]->to_tensor(), "self"}, args[1]->to_int(), args[2]->to_bool(),
            {args[3]->to_tensor(), "values"}, {args[4]->to_tensor(), "indices"});
}

void sort_values_stable(KernelContext& ctx, Span<EValue*> args) {
  sort_impl(ctx, {args[0]->to_tensor(), "self"}, args[2]->to_int(), args[3]->to_bool(),
            {args[4]->to_tensor(), "values"}, {args[5]->to_tensor(), "indices"});
}

}  // namespace torchlight::portable
