// aten::sort.values and aten::sort.values_stable: the elements of each
// slice along `dim` in ascending (or descending) order, with the positions
// they came from. NaN sorts above every number. The sort is always stable
// (equal values keep their order), which is what `stable` asks for and a
// valid answer when it does not. Every real dtype.
//
// Prepare (at load) checks `dim` and the dtypes and picks the loop for
// self's dtype; the eval checks only what a run's shapes decide.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/sort_order.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

namespace {

// What the program fixes: `dim` against self's rank, the dtypes. Checked at
// load by prepare, and on every call by the reference eval.
Status check_sort_args(const NamedTensor& self, int64_t dim_arg, const NamedTensor& values,
                       const NamedTensor& indices, size_t* dim) {
  TL_RETURN_IF_ERROR(wrap_dim(dim_arg, self.tensor.dim(), "dim", dim));
  if (!visit_real_type(self.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype(self.name, self.tensor.scalar_type(), kRealTypeNames);
  }
  return check_sort_outs(self, values, indices);
}

// The outs resized to self's shape and each slice sorted; after
// check_sort_args, with self of dtype CTYPE.
template <typename CTYPE>
void sort_shaped(KernelContext& ctx, const NamedTensor& self, size_t dim, bool descending,
                 const NamedTensor& values, const NamedTensor& indices) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(values, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, self.tensor.sizes()));
  if (self.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(values));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(indices));

  const int64_t n = self.tensor.dim() == 0 ? 1 : self.tensor.size(dim);
  for_each_slice<CTYPE>(self.tensor, values.tensor, indices.tensor, dim,
                        [&](const StridedSlice<CTYPE>& in, const StridedSlice<CTYPE>& out,
                            const StridedSlice<int64_t>& perm) {
                          sort_positions(perm, n, SortOrder<CTYPE>(in, descending));
                          for (int64_t i = 0; i < n; ++i) out.set(i, in.get(perm.get(i)));
                        });
}

// Where the two overloads keep dim (descending, values, indices follow).
constexpr size_t kSortDim = 1;
constexpr size_t kStableSortDim = 2;

template <size_t kDim>
void sort_reference(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor values{args[kDim + 2]->to_tensor(), "values"};
  const NamedTensor indices{args[kDim + 3]->to_tensor(), "indices"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_sort_args(self, args[kDim]->to_int(), values, indices, &dim));
  TL_SWITCH_REAL_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    sort_shaped<CTYPE>(ctx, self, dim, args[kDim + 1]->to_bool(), values, indices);
  });
}

// Prepared for self's dtype; `dim` is read again (an earlier instruction
// may have computed it) and anything out of range goes to the reference.
template <typename CTYPE, size_t kDim, KernelFunction reference>
void sort_eval(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  size_t dim = 0;
  if (!view_gather::wrap(args[kDim]->to_int(), self.tensor.dim(), &dim)) {
    return reference(ctx, args);
  }
  sort_shaped<CTYPE>(ctx, self, dim, args[kDim + 1]->to_bool(),
                     {args[kDim + 2]->to_tensor(), "values"},
                     {args[kDim + 3]->to_tensor(), "indices"});
}

template <size_t kDim, KernelFunction reference>
Status prepare_sort(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  size_t dim = 0;
  TL_RETURN_IF_ERROR(check_sort_args(self, args[kDim]->to_int(),
                                     {args[kDim + 2]->to_tensor(), "values"},
                                     {args[kDim + 3]->to_tensor(), "indices"}, &dim));
  visit_real_type(self.tensor.scalar_type(), [&](auto tag) {
    call->eval = &sort_eval<typename decltype(tag)::type, kDim, reference>;
  });
  return Error::kOk;
}

}  // namespace

void sort_values(KernelContext& ctx, Span<EValue*> args) { sort_reference<kSortDim>(ctx, args); }

void sort_values_stable(KernelContext& ctx, Span<EValue*> args) {
  sort_reference<kStableSortDim>(ctx, args);
}

Status sort_values_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_sort<kSortDim, &sort_values>(args, call);
}

Status sort_values_stable_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_sort<kStableSortDim, &sort_values_stable>(args, call);
}

}  // namespace torchlight::portable
