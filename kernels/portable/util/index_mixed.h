// index.Tensor's prepared path for one bool/uint8 mask among integer
// index tensors (x[mask, idx], x[idx, mask], x[:, mask, idx]...), the
// indexed dims adjacent. As in ATen, the mask stands for the coordinates of
// its true elements in row-major order (one 1-D integer index of length M,
// its true count, per dim it covers); these broadcast with the integer
// indices to B, and the result is self's dims before the indexed ones, B,
// then the dims after. Each result element copies one contiguous block of
// the dims after. The j-th true element is found with a cursor that moves
// forward through the mask (reset when j goes back), so no memory is
// needed for the coordinates. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/index_broadcast.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable::index_mixed {

/// The entries of one call: integer tensors and one mask, in order.
struct Blocks {
  struct Entry {
    const Tensor* tensor;
    bool is_mask;
    size_t first_dim;  // The self dim it indexes first.
  };
  Entry entries[kMaxTensorDim];
  size_t count = 0;
  size_t first_dim = 0;  // Self dims [first_dim, end_dim) are indexed.
  size_t end_dim = 0;
  const Tensor* mask = nullptr;
  int64_t mask_count = 0;  // M.
  ShapeBuffer broadcast;   // B.
  int64_t outer = 1;
  int64_t inner = 1;
};

inline bool is_mask_type(ScalarType type) {
  return type == ScalarType::kBool || type == ScalarType::kByte;
}

/// Fills `blocks`' entries; false (the reference decides) unless they are
/// exactly one mask and at least one integer tensor, adjacent, the mask's
/// shape that of the dims it covers, every index tensor dense. Needs no
/// data: the prepare step runs it at load.
inline bool entries(const Tensor& self, Span<const Tensor> indices, Blocks* b) {
  size_t dim = 0;
  bool gap = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& t = indices[i];
    if (!t.defined()) {
      gap = b->count > 0;
      ++dim;
      continue;
    }
    if (gap || !is_contiguous_dim_order(t.dim_order())) return false;
    if (b->count == 0) b->first_dim = dim;
    const bool mask = is_mask_type(t.scalar_type());
    if (mask && (b->mask != nullptr || t.dim() == 0)) return false;
    const size_t covered = mask ? t.dim() : 1;
    if (dim + covered > self.dim()) return false;
    if (mask) {
      for (size_t k = 0; k < t.dim(); ++k) {
        if (t.size(k) != self.size(dim + k)) return false;
      }
      b->mask = &t;
    }
    b->entries[b->count++] = {&t, mask, dim};
    dim += covered;
  }
  if (b->mask == nullptr || b->count < 2) return false;
  b->end_dim = dim;
  return true;
}

/// entries(), then the mask's true count (a run's data) and B; false when
/// the shapes do not broadcast or the result has too many dims.
inline bool plan(const Tensor& self, Span<const Tensor> indices, Blocks* b) {
  if (!entries(self, indices, b)) return false;
  const Tensor& mask = *b->mask;
  const uint8_t* bits = static_cast<const uint8_t*>(mask.const_data_ptr());
  if (mask.numel() > 0 && bits == nullptr) return false;
  for (int64_t p = 0; p < mask.numel(); ++p) b->mask_count += bits[p] != 0;
  // B: the integer shapes and [M], right-aligned.
  ShapeBuffer& s = b->broadcast;
  for (size_t e = 0; e < b->count; ++e) {
    const Tensor& t = *b->entries[e].tensor;
    const bool is_mask = b->entries[e].is_mask;
    const int64_t mask_count = b->mask_count;
    auto size_at = [&](size_t k) -> int64_t { return is_mask ? mask_count : t.size(k); };
    if (!index_broadcast::broadcast_into(&s, is_mask ? 1 : t.dim(), size_at)) return false;
  }
  if (self.dim() - (b->end_dim - b->first_dim) + s.dim > kMaxTensorDim) return false;
  for (size_t d = 0; d < b->first_dim; ++d) b->outer *= self.size(d);
  for (size_t d = b->end_dim; d < self.dim(); ++d) b->inner *= self.size(d);
  return true;
}

/// Whether every integer index is in range for its dim (negative values
/// count from the end).
inline bool indices_in_range(const Tensor& self, const Blocks& b) {
  for (size_t e = 0; e < b.count; ++e) {
    if (b.entries[e].is_mask) continue;
    const Tensor& t = *b.entries[e].tensor;
    const int64_t size = self.size(b.entries[e].first_dim);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t v = load_index(t, i);
      if (v < -size || v >= size) return false;
    }
  }
  return true;
}

/// The row-major position of the mask's j-th true element.
class MaskCursor {
 public:
  explicit MaskCursor(const Tensor& mask)
      : bits_(static_cast<const uint8_t*>(mask.const_data_ptr())) {}
  int64_t find(int64_t j) {
    if (j < rank_) {
      rank_ = -1;
      pos_ = -1;
    }
    while (rank_ < j) {
      ++pos_;
      if (bits_[pos_] != 0) ++rank_;
    }
    return pos_;
  }

 private:
  const uint8_t* bits_;
  int64_t rank_ = -1;
  int64_t pos_ = -1;
};

/// Copies self[indices] into `to` (out's data, dense, already sized: outer
/// x B x inner), one block of `inner` elements per (outer, B) position, in
/// the reference's row-major order. self is dense.
inline void copy_blocks(const Tensor& self, const Blocks& b, char* to) {
  const Tensor& mask = *b.mask;
  MaskCursor cursor(mask);
  const ShapeBuffer& s = b.broadcast;
  const int64_t element = static_cast<int64_t>(self.element_size());
  const size_t block_bytes = static_cast<size_t>(b.inner * element);
  const char* from = static_cast<const char*>(self.const_data_ptr());
  const int64_t outer_stride = b.first_dim == 0 ? 0 : self.strides()[b.first_dim - 1];
  int64_t b_numel = 1;
  for (size_t k = 0; k < s.dim; ++k) b_numel *= s.sizes[k];
  for (int64_t o = 0; o < b.outer; ++o) {
    for (int64_t at = 0; at < b_numel; ++at) {
      int64_t coord[kMaxTensorDim];
      index_broadcast::unravel(at, s, coord);
      int64_t offset = o * outer_stride;
      for (size_t e = 0; e < b.count; ++e) {
        const Blocks::Entry& entry = b.entries[e];
        if (entry.is_mask) {
          // Its index is 1-D [M] in B's last dim (size 1 broadcasts: j = 0).
          const int64_t j = b.mask_count == 1 ? 0 : coord[s.dim - 1];
          int64_t p = cursor.find(j);
          for (size_t k = mask.dim(); k-- > 0;) {
            offset += (p % mask.size(k)) * self.strides()[entry.first_dim + k];
            p /= mask.size(k);
          }
          continue;
        }
        int64_t v = index_broadcast::index_at(*entry.tensor, coord, s.dim);
        if (v < 0) v += self.size(entry.first_dim);
        offset += v * self.strides()[entry.first_dim];
      }
      std::memcpy(to + (o * b_numel + at) * static_cast<int64_t>(block_bytes),
                  from + offset * element, block_bytes);
    }
  }
}

}  // namespace torchlight::portable::index_mixed
