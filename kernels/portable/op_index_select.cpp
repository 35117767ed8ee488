// aten::index_select.out: the entries of self along `dim` listed by
// `index` (a 0-d or 1-D int64/int32 tensor), in that order. Index values
// must be in [0, size) as in ATen (negative values are errors here, not
// wrapped); every value is checked before it is used. Any dtype. dim, the
// index's rank and dtype and out's dtype are checked at load; the installed
// eval checks a run's sizes and index values. Packed contiguous self and
// out copy one block per selected entry, checked without building a Status
// (anything else, errors included, takes the checked path).
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Whether self and out are packed in the contiguous order, with data, and
// apart in memory: then a selected entry is one contiguous block of each.
bool packed_apart(const Tensor& self, const Tensor& out) {
  return dense_path::is_dense(self) && dense_path::is_packed(self) &&
         dense_path::is_dense(out) && dense_path::is_packed(out) && self.numel() > 0 &&
         out.numel() > 0 && !storage_overlaps(out, self);
}

// What the program fixes: dim against self's rank, the index's rank and
// dtype, out's dtype.
Status check_index_select_fixed(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const NamedTensor index{args[2]->to_tensor(), "index"};
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  TL_CHECK_OR_RETURN(index.tensor.dim() <= 1, Error::kInvalidArgument,
                     "argument 'index' is %zu-D; it must be a vector (0-d or 1-D)",
                     index.tensor.dim());
  TL_RETURN_IF_ERROR(check_index_dtype(index, /*allow_int32=*/true));
  return check_same_dtype({args[3]->to_tensor(), "out"}, self.scalar_type(), "self");
}

// The common case, checked with bools (no Status): self and out packed
// and apart in memory with data, out of the result's shape or resizable to
// it, every index in range. Copies one block of the dims after `dim` per
// (outer position, selected entry). False leaves the call to the checked
// path (nothing written; out may have been resized).
bool select_blocks(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  const int64_t rank = static_cast<int64_t>(self.dim());
  int64_t wrapped = args[1]->to_int();
  if (wrapped < 0) wrapped += rank;
  if (wrapped < 0 || wrapped >= rank) return false;
  const size_t dim = static_cast<size_t>(wrapped);
  const int64_t count = index.numel();
  const int64_t size = self.size(dim);
  const int64_t index_stride = index.dim() == 1 ? index.strides()[0] : 0;
  if (count > 0 && index.const_data_ptr() == nullptr) return false;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = load_index(index, i * index_stride);
    if (at < 0 || at >= size) return false;
  }
  SizesType shape[kMaxTensorDim];
  bool same = out.dim() == self.dim();
  for (size_t d = 0; d < self.dim(); ++d) {
    shape[d] = d == dim ? static_cast<SizesType>(count) : self.size(d);
    same = same && out.size(d) == shape[d];
  }
  if (!same && !resize_tensor({out, "out"}, {shape, self.dim()}).ok()) return false;
  const char* from = static_cast<const char*>(self.const_data_ptr());
  char* to = static_cast<char*>(out.mutable_data_ptr());
  if (from == nullptr || to == nullptr || !packed_apart(self, out)) return false;
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (size_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const size_t block = static_cast<size_t>(inner) * self.element_size();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t at = load_index(index, i * index_stride);
      std::memcpy(to + static_cast<size_t>(o * count + i) * block,
                  from + static_cast<size_t>(o * size + at) * block, block);
    }
  }
  return true;
}

// The sizes, index values and copies, after check_index_select_fixed.
void index_select_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  if (select_blocks(args)) return;
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor index{args[2]->to_tensor(), "index"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  const int64_t count = index.tensor.numel();
  const bool scalar_self = self.tensor.dim() == 0;
  TL_KERNEL_CHECK(ctx, !scalar_self || count == 1, Error::kInvalidArgument,
                  "argument 'index' has %lld elements; a 0-d 'self' takes exactly one",
                  static_cast<long long>(count));
  ShapeBuffer shape;
  shape.dim = self.tensor.dim();
  for (size_t d = 0; d < shape.dim; ++d) shape.sizes[d] = self.tensor.size(d);
  if (!scalar_self) shape.sizes[dim] = static_cast<SizesType>(count);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(index));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  const int64_t size = scalar_self ? 1 : self.tensor.size(dim);
  const int64_t index_stride = index.tensor.dim() == 1 ? index.tensor.strides()[0] : 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = 0;
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_index_value(load_index(index.tensor, i * index_stride),
                                                     size, dim, /*allow_negative=*/false, "index",
                                                     &at));
    if (scalar_self) {
      copy_view(StridedView(out.tensor), StridedView(self.tensor));
      continue;
    }
    StridedView from(self.tensor);
    from.select(dim, at);
    StridedView to(out.tensor);
    to.select(dim, i);
    copy_view(to, from);
  }
}

}  // namespace

void index_select_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<3, &check_index_select_fixed, &index_select_shaped>(ctx, args);
}

Status index_select_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_index_select_fixed, &index_select_shaped>(args, call);
}

}  // namespace torchlight::portable
