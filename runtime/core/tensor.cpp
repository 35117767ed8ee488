#include "runtime/core/tensor.h"

#include <cstdio>

#include "runtime/platform/assert.h"

namespace torchlight {

bool compute_numel(Span<const SizesType> sizes, int64_t* numel) {
  int64_t n = 1;
  for (SizesType s : sizes) {
    if (s < 0) return false;
    if (__builtin_mul_overflow(n, static_cast<int64_t>(s), &n)) return false;
  }
  *numel = n;
  return true;
}

bool compute_strides(Span<const SizesType> sizes, Span<const DimOrderType> dim_order,
                     StridesType* strides) {
  const size_t dim = sizes.size();
  if (dim_order.size() != dim || dim > kMaxTensorDim) return false;
  bool seen[kMaxTensorDim] = {};
  for (DimOrderType d : dim_order) {
    if (d >= dim || seen[d]) return false;
    seen[d] = true;
  }
  // The last entry of dim_order is the fastest-moving dimension. Computed
  // into a local array so a failure leaves `strides` untouched.
  StridesType result[kMaxTensorDim] = {};
  StridesType stride = 1;
  for (size_t i = dim; i-- > 0;) {
    const DimOrderType d = dim_order[i];
    result[d] = stride;
    if (i == 0) break;
    // Size-0/1 dims don't change the next stride beyond a factor of 1,
    // matching PyTorch's contiguous strides (size 0 counts as 1). Because
    // size 0 counts as 1, a zero-numel shape can still overflow here.
    const StridesType factor = sizes[d] > 1 ? sizes[d] : 1;
    if (__builtin_mul_overflow(stride, factor, &stride)) return false;
  }
  for (size_t i = 0; i < dim; ++i) strides[i] = result[i];
  return true;
}

bool is_contiguous_dim_order(Span<const DimOrderType> dim_order) {
  for (size_t i = 0; i < dim_order.size(); ++i) {
    if (dim_order[i] != i) return false;
  }
  return true;
}

bool is_channels_last_dim_order(Span<const DimOrderType> dim_order) {
  return dim_order.size() == 4 && dim_order[0] == 0 && dim_order[1] == 2 && dim_order[2] == 3 &&
         dim_order[3] == 1;
}

const char* format_sizes(Span<const SizesType> sizes, char* out, size_t out_size) {
  size_t used = 0;
  auto append = [&](const char* format, long long value) {
    if (used < out_size) {
      int n = snprintf(out + used, out_size - used, format, value);
      if (n > 0) used += static_cast<size_t>(n);
    }
  };
  if (out_size == 0) return out;
  out[0] = '\0';
  append("[%lld", sizes.empty() ? 0 : static_cast<long long>(sizes[0]));
  if (sizes.empty()) {
    snprintf(out, out_size, "[]");
    return out;
  }
  for (size_t i = 1; i < sizes.size(); ++i) append(", %lld", sizes[i]);
  if (used < out_size) snprintf(out + used, out_size - used, "]");
  return out;
}

TensorImpl::TensorImpl(ScalarType type, size_t dim, SizesType* sizes, void* data,
                       DimOrderType* dim_order, StridesType* strides,
                       TensorShapeDynamism dynamism)
    : type_(type),
      dim_(dim),
      sizes_(sizes),
      data_(data),
      dim_order_(dim_order),
      strides_(strides),
      dynamism_(dynamism),
      numel_(0),
      capacity_numel_(0) {
  // Callers validate sizes before constructing (see method loading); here an
  // invalid shape is an internal bug.
  bool ok = compute_numel({sizes_, dim_}, &numel_);
  TL_DEBUG_ASSERT(ok);
  (void)ok;
  capacity_numel_ = numel_;
}

Status TensorImpl::resize(Span<const SizesType> new_sizes) {
  char want[128];
  char have[128];
  if (new_sizes.size() != dim_) {
    return Status::error(Error::kInvalidArgument,
                         "cannot resize a %zu-d tensor %s to %zu-d %s", dim_,
                         format_sizes(sizes(), have, sizeof(have)), new_sizes.size(),
                         format_sizes(new_sizes, want, sizeof(want)));
  }
  int64_t new_numel = 0;
  if (!compute_numel(new_sizes, &new_numel)) {
    return Status::error(Error::kInvalidArgument, "invalid sizes %s (negative or overflowing)",
                         format_sizes(new_sizes, want, sizeof(want)));
  }
  bool same = true;
  for (size_t i = 0; i < dim_; ++i) same = same && sizes_[i] == new_sizes[i];
  if (same) return Error::kOk;
  if (dynamism_ == TensorShapeDynamism::kStatic) {
    return Status::error(Error::kInvalidArgument, "static tensor has sizes %s, got %s",
                         format_sizes(sizes(), have, sizeof(have)),
                         format_sizes(new_sizes, want, sizeof(want)));
  }
  const bool may_grow = dynamism_ == TensorShapeDynamism::kDynamicUnbound && !storage_bound_;
  if (!may_grow && new_numel > capacity_numel_) {
    return Status::error(Error::kInvalidArgument,
                         "sizes %s need %lld elements, more than the %lld %s",
                         format_sizes(new_sizes, want, sizeof(want)),
                         static_cast<long long>(new_numel), static_cast<long long>(capacity_numel_),
                         storage_bound_ ? "its storage holds" : "planned");
  }
  // Checked before anything is written, so a failed resize changes nothing.
  StridesType new_strides[kMaxTensorDim];
  if (!compute_strides(new_sizes, {dim_order_, dim_}, new_strides)) {
    return Status::error(Error::kInvalidArgument,
                         "cannot lay out sizes %s: invalid dim order or strides overflow int64",
                         format_sizes(new_sizes, want, sizeof(want)));
  }
  for (size_t i = 0; i < dim_; ++i) {
    sizes_[i] = new_sizes[i];
    strides_[i] = new_strides[i];
  }
  numel_ = new_numel;
  if (may_grow && new_numel > capacity_numel_) {
    capacity_numel_ = new_numel;  // The owner rebinds the data (see OwnedTensor).
  }
  return Error::kOk;
}

}  // namespace torchlight
