// aten::topk.values: the k largest (or smallest) elements of each slice
// along `dim`, with their positions. NaN counts as the largest value. The
// result is always sorted (largest first, or smallest first when
// largest=False), which also satisfies sorted=False; among equal values the
// earlier position comes first. Every real dtype but bool, as in ATen.
//
// Prepare (at load) checks `dim` and the dtypes and picks the loop for
// self's dtype; the eval checks only what a run's shapes decide (k against
// the size of `dim`).
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
Status check_topk_args(Span<EValue*> args, size_t* dim) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor values{args[5]->to_tensor(), "values"};
  const NamedTensor indices{args[6]->to_tensor(), "indices"};
  TL_RETURN_IF_ERROR(wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim", dim));
  if (!visit_real_type_no_bool(self.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype(self.name, self.tensor.scalar_type(), kRealTypeNoBoolNames);
  }
  return check_sort_outs(self, values, indices);
}

// k checked against this run's self, the outs resized, each slice's top k
// found; after check_topk_args, with self of dtype CTYPE.
template <typename CTYPE>
void topk_shaped(KernelContext& ctx, Span<EValue*> args, size_t dim) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t k = args[1]->to_int();
  const bool largest = args[3]->to_bool();
  const NamedTensor values{args[5]->to_tensor(), "values"};
  const NamedTensor indices{args[6]->to_tensor(), "indices"};
  const bool scalar = self.tensor.dim() == 0;
  const int64_t n = scalar ? 1 : self.tensor.size(dim);
  TL_KERNEL_CHECK(ctx, k >= 0 && k <= n, Error::kInvalidArgument,
                  "argument 'k' is %lld; expected 0..%lld (the size of dimension %zu of 'self')",
                  static_cast<long long>(k), static_cast<long long>(n), dim);
  ShapeBuffer shape;
  shape.dim = self.tensor.dim();
  for (size_t d = 0; d < shape.dim; ++d) shape.sizes[d] = self.tensor.size(d);
  if (!scalar) shape.sizes[dim] = static_cast<SizesType>(k);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(values, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, shape.span()));
  if (values.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(values));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(indices));

  for_each_slice<CTYPE>(self.tensor, values.tensor, indices.tensor, dim,
                        [&](const StridedSlice<CTYPE>& in, const StridedSlice<CTYPE>& out,
                            const StridedSlice<int64_t>& perm) {
                          top_positions(perm, n, k, SortOrder<CTYPE>(in, /*descending=*/largest));
                          for (int64_t i = 0; i < k; ++i) out.set(i, in.get(perm.get(i)));
                        });
}

// Prepared for self's dtype; `dim` is read again (an earlier instruction
// may have computed it) and one out of range goes to the reference.
template <typename CTYPE>
void topk_eval(KernelContext& ctx, Span<EValue*> args) {
  size_t dim = 0;
  if (!view_gather::wrap(args[2]->to_int(), args[0]->to_tensor().dim(), &dim)) {
    return topk_values(ctx, args);
  }
  topk_shaped<CTYPE>(ctx, args, dim);
}

}  // namespace

void topk_values(KernelContext& ctx, Span<EValue*> args) {
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_topk_args(args, &dim));
  TL_SWITCH_REAL_TYPES_NO_BOOL(args[0]->to_tensor().scalar_type(), ctx, "self", CTYPE,
                               [&] { topk_shaped<CTYPE>(ctx, args, dim); });
}

Status topk_values_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  size_t dim = 0;
  TL_RETURN_IF_ERROR(check_topk_args(args, &dim));
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &topk_eval<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
