// Broadcasting: the common shape of several tensors (ATen's rules), and a
// walker that maps each element of that shape to an element offset in every
// operand, through the operands' own strides.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// A shape with inline storage.
struct BroadcastShape {
  SizesType sizes[kMaxTensorDim] = {};
  size_t dim = 0;

  Span<const SizesType> span() const { return {sizes, dim}; }
};

/// The broadcast shape of `inputs`: shapes are aligned at their last
/// dimension, the result has the largest rank, and at each dimension every
/// size must equal the result's or be 1 (so 0 broadcasts with 1 but not 3).
/// A 0-d tensor broadcasts with anything. Errors: kInvalidArgument naming the
/// two conflicting inputs, their shapes and the dimension, e.g. "shapes
/// [2, 3] ('self') and [4] ('other') do not broadcast: size 3 vs 4 at
/// dimension 1 of the result".
Status compute_broadcast_shape(Span<const NamedTensor> inputs, BroadcastShape* out);
Status compute_broadcast_shape(const NamedTensor& a, const NamedTensor& b, BroadcastShape* out);

/// Whether a tensor of shape `from` broadcasts to exactly `to`.
bool broadcasts_to(Span<const SizesType> from, Span<const SizesType> to);

/// Walks the elements of a shape in row-major (logical) order and yields,
/// for each operand, the offset in elements of the matching element: the
/// sum over dimensions of index * stride, with stride 0 where the operand is
/// broadcast (size 1 or missing). Operands keep their own layout, so
/// permuted dim orders and gapped strides work, for inputs and outputs alike.
/// Dimensions that are contiguous in every operand are merged, so the common
/// case (same shapes, contiguous) becomes one flat loop.
class BroadcastIndexer {
 public:
  /// Enough for ternary ops (where, lerp, addcmul) plus the output.
  static constexpr size_t kMaxOperands = 5;

  /// Prepares a walk over `shape` for `operands`. Each operand's sizes and
  /// strides are copied, so the tensors need not outlive the indexer.
  /// Errors: kInvalidArgument when there are more than kMaxOperands operands
  /// or an operand does not broadcast to `shape` (naming it and both shapes).
  Status init(Span<const SizesType> shape, Span<const NamedTensor> operands);

  /// Elements in `shape`; 1 for a 0-d shape, 0 when any size is 0.
  int64_t numel() const { return numel_; }
  size_t num_operands() const { return num_operands_; }

  /// Offsets of the element at row-major linear index `index` (< numel()),
  /// one per operand, into `offsets`.
  void offsets_at(int64_t index, int64_t* offsets) const;

  /// Calls fn(const int64_t* offsets) for every element, in row-major order.
  template <typename Fn>
  void for_each(Fn&& fn) const;

  /// Each operand's stride in the innermost merged dimension: along one
  /// run of for_each_run, element k of operand op sits at
  /// offsets[op] + k * run_stride(op).
  int64_t run_stride(size_t op) const { return dims_ == 0 ? 0 : strides_[op][dims_ - 1]; }

  /// Calls fn(const int64_t* offsets, int64_t length) for the runs that
  /// cover row-major linear indices [begin, end), in order; a run never
  /// crosses the innermost merged dimension, so a loop over it has fixed
  /// strides (run_stride) a compiler can vectorise. Any split of [0,
  /// numel()) into ranges visits every element once.
  template <typename Fn>
  void for_each_run(int64_t begin, int64_t end, Fn&& fn) const;

 private:
  // Moves index and offsets (at the start of a row of the innermost
  // dimension) to the next row's start; false after the last row.
  bool next_row(int64_t* index, int64_t* offsets) const;

  // After merging: dims_ dimensions, outermost first.
  size_t dims_ = 0;
  size_t num_operands_ = 0;
  int64_t numel_ = 0;
  int64_t sizes_[kMaxTensorDim] = {};
  int64_t strides_[kMaxOperands][kMaxTensorDim] = {};
};

template <typename Fn>
void BroadcastIndexer::for_each(Fn&& fn) const {
  int64_t offsets[kMaxOperands] = {};
  if (numel_ == 0) return;
  if (dims_ == 0) {
    fn(static_cast<const int64_t*>(offsets));
    return;
  }
  const size_t inner = dims_ - 1;
  const int64_t inner_size = sizes_[inner];
  int64_t index[kMaxTensorDim] = {};
  for (;;) {
    for (int64_t i = 0; i < inner_size; ++i) {
      fn(static_cast<const int64_t*>(offsets));
      for (size_t op = 0; op < num_operands_; ++op) offsets[op] += strides_[op][inner];
    }
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] -= strides_[op][inner] * inner_size;
    if (!next_row(index, offsets)) return;
  }
}

template <typename Fn>
void BroadcastIndexer::for_each_run(int64_t begin, int64_t end, Fn&& fn) const {
  int64_t offsets[kMaxOperands] = {};
  if (begin >= end) return;
  if (dims_ == 0) {
    fn(static_cast<const int64_t*>(offsets), int64_t{1});
    return;
  }
  int64_t index[kMaxTensorDim] = {};
  int64_t rest = begin;
  for (size_t d = dims_; d-- > 0;) {
    index[d] = rest % sizes_[d];
    rest /= sizes_[d];
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] += index[d] * strides_[op][d];
  }
  const size_t inner = dims_ - 1;
  int64_t column = index[inner];
  for (int64_t at = begin;;) {
    const int64_t length = sizes_[inner] - column < end - at ? sizes_[inner] - column : end - at;
    fn(static_cast<const int64_t*>(offsets), length);
    at += length;
    if (at >= end) return;
    // Back to the row's start, then on to the next row.
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] -= strides_[op][inner] * column;
    column = 0;
    if (!next_row(index, offsets)) return;
  }
}

inline bool BroadcastIndexer::next_row(int64_t* index, int64_t* offsets) const {
  // Carry into the outer dimensions, odometer style.
  size_t d = dims_ - 1;
  for (;;) {
    if (d == 0) return false;
    --d;
    ++index[d];
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] += strides_[op][d];
    if (index[d] < sizes_[d]) return true;
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] -= strides_[op][d] * sizes_[d];
    index[d] = 0;
  }
}

}  // namespace torchlight::portable
