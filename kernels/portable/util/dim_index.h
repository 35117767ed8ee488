// Dimension and index arguments of shape and indexing kernels: wrapping a
// possibly negative dim, reading size lists, and reading index values from
// index tensors, each validated against the tensor it applies to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// A shape built by a kernel, with inline storage.
struct ShapeBuffer {
  SizesType sizes[kMaxTensorDim] = {};
  size_t dim = 0;

  Span<const SizesType> span() const { return {sizes, dim}; }
  int64_t numel() const {
    int64_t n = 1;
    for (size_t d = 0; d < dim; ++d) n *= sizes[d];
    return n;
  }
};

/// ATen's maybe_wrap_dim: `dim` in [-rank, rank) becomes dim mod rank in
/// *out. A 0-d tensor accepts -1 and 0 (as if it had one dimension), giving
/// 0. Errors: kInvalidArgument naming `name`, the value and the range, e.g.
/// "argument 'dim' is 3, out of range for a 2-d tensor (expected -2..1)".
Status wrap_dim(int64_t dim, size_t rank, const char* name, size_t* out);

/// ATen's slice bounds along a dimension of `size` elements: a None start
/// is 0 and a None end is `size`; negative values count from the end; both
/// are clamped to [0, size] and an end before the start gives an empty
/// slice. Writes the first index and the number of elements taken (every
/// `step`-th). `start` and `end` are Int or None. Errors: kInvalidArgument
/// naming 'step' unless it is positive.
Status normalize_slice(const EValue& start, const EValue& end, int64_t step, int64_t size,
                       int64_t* out_start, int64_t* out_length);

/// normalize_slice without a Status, for prepared evals: false when `step`
/// is not positive.
inline bool slice_bounds(const EValue& start, const EValue& end, int64_t step, int64_t size,
                         int64_t* out_start, int64_t* out_length) {
  if (step <= 0) return false;
  int64_t first = start.is_int() ? start.to_int() : 0;
  int64_t last = end.is_int() ? end.to_int() : size;
  if (first < 0) first = first < -size ? 0 : first + size;
  if (last < 0) last = last < -size ? 0 : last + size;
  if (first > size) first = size;
  if (last > size) last = size;
  if (last < first) last = first;
  *out_start = first;
  // (last - first) <= size, so no overflow; ceil division by a positive step.
  *out_length = (last - first) / step + ((last - first) % step != 0 ? 1 : 0);
  return true;
}

/// ATen's infer_size for view/reshape: `size` (a view_copy `size`
/// argument, at most one entry -1) with the -1 resolved so the shape holds
/// `numel` elements. Errors: kInvalidArgument naming 'size' for two -1s, a
/// size below -1, a -1 next to a 0, or a shape that does not hold `numel`.
Status infer_view_shape(Span<const int64_t> size, int64_t numel, ShapeBuffer* shape);

/// Errors: kInvalidArgument naming `name` when a list of sizes of `length`
/// entries has more than kMaxTensorDim (what a program fixes of the list).
Status check_list_fits_rank(size_t length, const char* name);

/// Copies an int list of sizes (e.g. full's `size`) into *out. Errors:
/// kInvalidArgument naming `name` when it has more than kMaxTensorDim
/// entries or an entry is negative or above INT32_MAX.
Status sizes_from_list(Span<const int64_t> list, const char* name, ShapeBuffer* out);

/// The element count of `shape` into *numel. Errors: kInvalidArgument
/// naming `name` for a negative size or a count that overflows int64.
Status checked_numel(Span<const SizesType> shape, const char* name, int64_t* numel);

/// Checks that an index tensor has dtype int64, or int32 too when
/// `allow_int32`. Errors: kInvalidType naming the argument and its dtype.
Status check_index_dtype(const NamedTensor& index, bool allow_int32);

/// The value of element `offset` (in elements, strides applied) of an int64
/// or int32 index tensor (checked by check_index_dtype).
inline int64_t load_index(const Tensor& index, int64_t offset) {
  if (index.scalar_type() == ScalarType::kLong) {
    int64_t v;
    std::memcpy(&v, index.const_data_ptr<char>() + offset * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, index.const_data_ptr<char>() + offset * 4, 4);
  return v;
}

/// Checks an index value read from a tensor against the size of the
/// dimension it indexes. With `allow_negative`, [-size, size) is accepted
/// and a negative value wraps; otherwise only [0, size). Errors:
/// kInvalidArgument (nothing is read or written out of bounds), e.g.
/// "index 5 is out of bounds for dimension 1 with size 3 (argument 'index')".
Status check_index_value(int64_t value, int64_t size, size_t dim, bool allow_negative,
                         const char* name, int64_t* wrapped);

}  // namespace torchlight::portable
