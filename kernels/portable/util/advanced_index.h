// AdvancedIndex: ATen's advanced indexing, self[indices] for a list of
// optional index tensors, shared by aten::index.Tensor_out (read) and
// aten::index_put.out (write).
//
// The rules, as in ATen:
// - Entry i of `indices` is None (an undefined tensor: that dimension is
//   taken whole), an int64/int32 tensor (indexes one dimension; negative
//   values count from the end), or a bool/uint8 mask covering as many
//   dimensions as it has, with exactly their sizes (it selects the
//   positions where it is true, in row-major order).
// - The index tensors (a mask counting as a 1-D tensor of its true count)
//   broadcast together to a shape B.
// - If the indexed dimensions are adjacent (no None between them), the
//   result is self's dimensions before them, then B, then the rest;
//   otherwise B comes first, then every dimension that was not indexed.
//
// Masks are not expanded into index lists (that would need memory): a
// cursor walks each mask to its j-th true element, which stays cheap because
// the result is visited in row-major order. Every index value is checked
// against its dimension before it is used.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// What a program fixes of `indices` against `self` (AdvancedIndex::init's
/// checks that need no sizes): at most self's rank of entries, each None or
/// an int64/int32/bool/uint8 tensor, no 0-d mask, no more dimensions
/// covered than self has, at least one tensor. Same errors as init.
Status check_index_entries(const Tensor& self, Span<const Tensor> indices,
                           const char* indices_name);

class AdvancedIndex {
 public:
  /// Checks `indices` (undefined tensors are None) against `self`, named
  /// `indices_name` in errors, and computes the result shape. The index
  /// tensors must outlive this object. Errors (kInvalidArgument unless
  /// noted): more entries or masked dimensions than self has; no tensor
  /// among the entries; an index dtype other than int64/int32/bool/uint8
  /// (kInvalidType); a 0-d mask; a mask whose shape differs from the
  /// dimensions it covers; index shapes that do not broadcast; a result of
  /// more than kMaxTensorDim dimensions.
  Status init(const Tensor& self, Span<const Tensor> indices, const char* indices_name);

  /// The shape of self[indices].
  Span<const SizesType> shape() const { return shape_.span(); }

  /// Errors: kInvalidArgument when `out` overlaps an index or mask tensor,
  /// which for_each reads again while the caller writes `out`.
  Status check_no_overlap_with(const NamedTensor& out) const;

  /// Calls fn(target_offset, other_offset) for every element of the result
  /// in row-major order: `target` has self's shape (self itself, or
  /// index_put's out) and target_offset is the element the result element
  /// comes from, through target's strides; other_offset applies
  /// `other_strides` (one per result dimension; 0 broadcasts) to the result
  /// coordinates. Errors: kInvalidArgument for an index value out of range,
  /// before anything is done with it.
  template <typename Fn>
  Status for_each(Span<const StridesType> target_strides, Span<const int64_t> other_strides,
                  const Fn& fn);

 private:
  struct Entry {
    Tensor tensor;
    size_t first_dim = 0;   // First self dimension it indexes.
    size_t num_dims = 1;    // Dimensions covered (a mask's rank; 1 for integers).
    bool is_mask = false;
    int64_t mask_count = 0; // True elements of a mask.
    // Mask cursor: the row-major position of its `cursor_rank`-th true
    // element (cursor_rank -1: before the first).
    int64_t cursor_rank = -1;
    int64_t cursor_pos = -1;
  };

  // Offset into the target of the result element at `coord`.
  Status target_offset(const int64_t* coord, Span<const StridesType> target_strides,
                       int64_t* offset);
  // Moves a mask's cursor to its `rank`-th true element; writes the
  // element's coordinates within the mask to `coord`. False when the mask
  // has fewer true elements than counted by init (it changed since).
  bool seek_mask(Entry& entry, int64_t rank, int64_t* coord);

  const char* name_ = "indices";
  Tensor self_;
  Entry entries_[kMaxTensorDim];
  size_t num_entries_ = 0;
  ShapeBuffer broadcast_;    // B.
  size_t broadcast_at_ = 0;  // Where B starts in the result.
  // For each result dimension outside B, the self dimension it walks.
  size_t result_to_self_[kMaxTensorDim] = {};
  ShapeBuffer shape_;
};

template <typename Fn>
Status AdvancedIndex::for_each(Span<const StridesType> target_strides,
                               Span<const int64_t> other_strides, const Fn& fn) {
  for (CoordWalk w(shape_.span()); !w.done(); w.next()) {
    int64_t coord[kMaxTensorDim];
    int64_t other = 0;
    for (size_t d = 0; d < shape_.dim; ++d) {
      coord[d] = w[d];
      other += coord[d] * other_strides[d];
    }
    int64_t target = 0;
    TL_RETURN_IF_ERROR(target_offset(coord, target_strides, &target));
    fn(target, other);
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
