// StridedView: tensor memory seen as sizes and element strides, and the one
// copy loop that the data-movement kernels share.
//
// permute, transpose, expand, slice, select, flip, unfold, diagonal, repeat,
// cat, split, pad... are all one copy with a different view of the source or
// of out. A kernel builds the views with the transforms below (after it has
// validated its arguments) and calls copy_view():
//
//   StridedView src(self);
//   src.permute(order);                  // the source as permute_copy sees it
//   copy_view(StridedView(out), src);    // out in its own dim order
//
// Both sides are walked in the row-major order of their own shapes, so the
// shapes may differ as long as the element counts match (view_copy copies a
// [2, 6] into a [3, 4]). Dimensions are merged where the layout allows, so a
// contiguous copy becomes one memcpy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

class StridedView {
 public:
  /// repeat splits every out dimension in two.
  static constexpr size_t kMaxDim = 2 * kMaxTensorDim;

  StridedView() = default;
  /// All of `tensor`, through its own sizes and strides. The tensor's data
  /// must outlive the view; writing through a view of an input is the
  /// caller's decision.
  explicit StridedView(const Tensor& tensor);

  size_t dim() const { return dim_; }
  int64_t size(size_t d) const { return sizes_[d]; }
  int64_t stride(size_t d) const { return strides_[d]; }
  /// Product of the sizes; 1 for a 0-d view.
  int64_t numel() const;
  size_t element_size() const { return element_size_; }
  /// Address of the first element (all indices 0); null for a view over a
  /// tensor without data. Only meaningful when numel() > 0.
  char* first() const;
  /// Address of the element `offset` elements (strides included) from first().
  char* at(int64_t offset) const { return first() + offset * static_cast<int64_t>(element_size_); }

  // Transforms. Arguments must be in range: kernels validate them first, so
  // these only assert (debug builds).

  /// Keeps index `index` of dimension `d` and drops the dimension.
  void select(size_t d, int64_t index);
  /// Drops dimension `d` without moving the start (the caller accounts
  /// for it elsewhere, as diagonal does).
  void remove(size_t d);
  /// Keeps `length` indices of dimension `d`: start, start + step, ...
  void narrow(size_t d, int64_t start, int64_t length, int64_t step = 1);
  /// Reverses dimension `d`.
  void flip(size_t d);
  /// New dimension i is old dimension order[i]; `order` holds dim() entries,
  /// a permutation.
  void permute(const size_t* order);
  /// Inserts a dimension before `d` (d <= dim()); stride 0 repeats the data
  /// (broadcast), as expand does.
  void insert(size_t d, int64_t size, int64_t stride);
  /// Replaces dimension `d` by two: (outer, size(d) / outer), outer first.
  /// size(d) must be a multiple of `outer` (or 0 with outer 0 allowed).
  void split(size_t d, int64_t outer, int64_t inner);
  /// Sets the size and stride of dimension `d` (expand, unfold).
  void set(size_t d, int64_t size, int64_t stride);
  /// Moves the start by `offset` elements (diagonal offsets).
  void shift(int64_t offset) { offset_ += offset; }
  /// Broadcasts to `shape`, as expand does: missing leading dimensions are
  /// inserted and size-1 dimensions take `shape`'s size with stride 0. The
  /// caller has checked broadcasts_to() (broadcast.h).
  void broadcast_to(Span<const SizesType> shape);
  /// The sizes, for resizing an out tensor to the view; dim() must be at
  /// most kMaxTensorDim and every size must fit SizesType.
  void sizes(SizesType* out) const;

 private:
  char* data_ = nullptr;
  size_t element_size_ = 0;
  int64_t offset_ = 0;  // Elements from data_ to the first element.
  size_t dim_ = 0;
  int64_t sizes_[kMaxDim] = {};
  int64_t strides_[kMaxDim] = {};
};

/// Copies numel() elements from `src` to `dst`, each walked in the row-major
/// order of its own shape; both must have the same numel and element size.
/// Bytes are copied unchanged (any dtype). The views must not overlap unless
/// they are identical.
void copy_view(const StridedView& dst, const StridedView& src);

/// Copies `count` elements: src's row-major elements [src_start, src_start +
/// count) to dst's [dst_start, dst_start + count). The ranges must lie
/// within both views (roll and view_copy use sub-ranges).
void copy_view_range(const StridedView& dst, int64_t dst_start, const StridedView& src,
                     int64_t src_start, int64_t count);

/// As copy_view, converting each element from `src_type` to `dst_type` as
/// ATen's copy_ does (convert() in convert.h: bool is != 0, floats to ints
/// truncate). Same dtypes copy bytes. Errors: kInvalidType naming
/// `src_name` or `dst_name` when a dtype is not one of the ten real types.
Status copy_view_converting(const StridedView& dst, ScalarType dst_type, const char* dst_name,
                            const StridedView& src, ScalarType src_type, const char* src_name);

/// Writes the element_size() bytes at `value` into every element of `dst`.
void fill_view(const StridedView& dst, const void* value);

/// The end of a view-copy kernel (permute_copy, slice_copy, ...): checks that
/// `out` has self's dtype, resizes it to `view`'s shape (at most
/// kMaxTensorDim dimensions) and copies the view's elements into it. `view`
/// views self. Errors: kInvalidType naming 'out' when the dtypes differ;
/// resize_tensor's errors; kInvalidArgument when self or out has elements
/// but no data.
Status copy_view_to_out(const NamedTensor& self, const StridedView& view, const NamedTensor& out);

}  // namespace torchlight::portable
