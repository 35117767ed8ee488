// aten::index.Tensor_out: self[indices] with ATen's advanced indexing
// (util/advanced_index.h): optional int64/int32 index tensors that
// broadcast together, bool/uint8 masks, negative indices counted from the
// end. A mask makes the result's size depend on the data, so out is resized
// at run time. Every index is checked before use. Any dtype.
//
// The prepare step checks at load what the shapes do not decide (the entry
// count, the index dtypes, a 0-d mask, out's dtype). When every index is an
// integer tensor, the indexed dims are adjacent and self, out and the
// indices are dense, it installs an eval that sees self as [outer, indexed
// dims, inner] and copies one contiguous block of `inner` elements per
// (outer, index) pair, in the reference's order. One bool/uint8 mask alone
// (x[mask], x[:, mask]) gets an eval that counts the mask's true elements,
// sizes out and copies the block of each, row-major. One mask among integer
// indices, adjacent, gets the eval of util/index_mixed.h. Anything else
// (indexed dims apart, an index out of range, a mask shape that no longer
// matches, overlapping memory) goes to the reference.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/index_broadcast.h"
#include "kernels/portable/util/index_mixed.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  AdvancedIndex index;
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.init(self.tensor, args[1]->to_tensor_list(), "indices"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, index.shape()));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.check_no_overlap_with(out));
  const int64_t size = static_cast<int64_t>(self.tensor.element_size());
  const char* from = self.tensor.const_data_ptr<char>();
  char* to = out.tensor.mutable_data_ptr<char>();
  int64_t out_strides[kMaxTensorDim];
  for (size_t d = 0; d < out.tensor.dim(); ++d) out_strides[d] = out.tensor.strides()[d];
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, index.for_each(self.tensor.strides(), {out_strides, out.tensor.dim()},
                          [&](int64_t self_at, int64_t out_at) {
                            std::memcpy(to + out_at * size, from + self_at * size,
                                        static_cast<size_t>(size));
                          }));
}

namespace {

// Gives `out` the shape self's dims [0, first), then `middle`, then self's
// dims from `rest` on, unless it has it; false when out cannot take it.
bool fit_out(const Tensor& self, size_t first, Span<const SizesType> middle, size_t rest,
             const Tensor& out) {
  SizesType shape[kMaxTensorDim];
  size_t n = 0;
  for (size_t d = 0; d < first; ++d) shape[n++] = self.size(d);
  for (SizesType size : middle) shape[n++] = size;
  for (size_t d = rest; d < self.dim(); ++d) shape[n++] = self.size(d);
  bool same = out.dim() == n;
  for (size_t d = 0; same && d < n; ++d) same = out.size(d) == shape[d];
  return same || resize_tensor({out, "out"}, {shape, n}).ok();
}

// The integer indices of one call, seen around the dims they index.
struct IndexBlocks {
  const Tensor* entries[kMaxTensorDim];  // The index tensors, in order.
  size_t count = 0;
  size_t first_dim = 0;  // The self dim the first index tensor indexes.
  ShapeBuffer broadcast;  // B: the index shapes broadcast together.
  int64_t outer = 1;
  int64_t inner = 1;
};

// Fills `blocks` from `indices`; false (the reference decides) for a mask,
// a None between index tensors, shapes that do not broadcast or a result
// of too many dims.
bool index_blocks(const Tensor& self, Span<const Tensor> indices, IndexBlocks* blocks) {
  size_t last = 0;
  bool seen = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].defined()) continue;
    const ScalarType type = indices[i].scalar_type();
    if (type != ScalarType::kLong && type != ScalarType::kInt) return false;
    if (!seen) blocks->first_dim = i;
    if (seen && i != last + 1) return false;
    seen = true;
    last = i;
    blocks->entries[blocks->count++] = &indices[i];
  }
  if (!seen || indices.size() > self.dim()) return false;
  ShapeBuffer& b = blocks->broadcast;
  for (size_t e = 0; e < blocks->count; ++e) {
    const Tensor& t = *blocks->entries[e];
    if (!index_broadcast::broadcast_into(&b, t.dim(), [&](size_t k) { return t.size(k); })) {
      return false;
    }
  }
  const size_t end = blocks->first_dim + blocks->count;
  if (self.dim() - blocks->count + b.dim > kMaxTensorDim) return false;
  for (size_t d = 0; d < blocks->first_dim; ++d) blocks->outer *= self.size(d);
  for (size_t d = end; d < self.dim(); ++d) blocks->inner *= self.size(d);
  return true;
}

void index_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Span<const Tensor> indices = args[1]->to_tensor_list();
  const Tensor out = args[2]->to_tensor();
  IndexBlocks blocks;
  if (!index_blocks(self, indices, &blocks)) return index_tensor_out(ctx, args);
  const ShapeBuffer& b = blocks.broadcast;
  const size_t end = blocks.first_dim + blocks.count;
  if (!fit_out(self, blocks.first_dim, b.span(), end, out)) {
    return index_tensor_out(ctx, args);
  }
  if (out.numel() == 0) return set_return(args, 3, *args[2]);
  const char* from = static_cast<const char*>(self.const_data_ptr());
  char* to = static_cast<char*>(out.mutable_data_ptr());
  if (from == nullptr || to == nullptr || storage_overlaps(out, self)) {
    return index_tensor_out(ctx, args);
  }
  for (size_t e = 0; e < blocks.count; ++e) {
    const Tensor& t = *blocks.entries[e];
    if (!dense_path::is_dense(t) || storage_overlaps(out, t)) return index_tensor_out(ctx, args);
  }
  // Every index value in range, before anything is copied.
  for (size_t e = 0; e < blocks.count; ++e) {
    const Tensor& t = *blocks.entries[e];
    const int64_t size = self.size(blocks.first_dim + e);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t v = load_index(t, i);
      if (v < -size || v >= size) return index_tensor_out(ctx, args);
    }
  }
  set_return(args, 3, *args[2]);
  const int64_t element = static_cast<int64_t>(self.element_size());
  const size_t block_bytes = static_cast<size_t>(blocks.inner * element);
  int64_t self_strides[kMaxTensorDim];  // In elements, of the indexed dims.
  for (size_t e = 0; e < blocks.count; ++e) {
    self_strides[e] = self.strides()[blocks.first_dim + e];
  }
  const int64_t outer_stride = blocks.first_dim == 0 ? 0 : self.strides()[blocks.first_dim - 1];
  int64_t b_numel = 1;
  for (size_t k = 0; k < b.dim; ++k) b_numel *= b.sizes[k];
  for (int64_t o = 0; o < blocks.outer; ++o) {
    for (int64_t at = 0; at < b_numel; ++at) {
      // `at` as coordinates of B, then each index tensor's element there.
      int64_t coord[kMaxTensorDim];
      index_broadcast::unravel(at, b, coord);
      int64_t offset = o * outer_stride;
      for (size_t e = 0; e < blocks.count; ++e) {
        int64_t v = index_broadcast::index_at(*blocks.entries[e], coord, b.dim);
        if (v < 0) v += self.size(blocks.first_dim + e);
        offset += v * self_strides[e];
      }
      std::memcpy(to + (o * b_numel + at) * static_cast<int64_t>(block_bytes),
                  from + offset * element, block_bytes);
    }
  }
}

// One bool/uint8 mask and no other index: self[mask] with the mask
// covering self's dims [first_dim, first_dim + mask rank).
struct MaskBlocks {
  const Tensor* mask = nullptr;
  size_t first_dim = 0;
  int64_t outer = 1;  // Elements of self's dims before the mask's.
  int64_t inner = 1;  // Elements of self's dims after them.
};

// Fills `blocks`; false (the reference decides) unless the entries are one
// mask (Nones before it) whose shape is that of the dims it covers.
bool mask_blocks(const Tensor& self, Span<const Tensor> indices, MaskBlocks* blocks) {
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].defined()) continue;
    if (blocks->mask != nullptr || !index_mixed::is_mask_type(indices[i].scalar_type())) {
      return false;
    }
    blocks->mask = &indices[i];
    blocks->first_dim = i;
  }
  const Tensor* mask = blocks->mask;
  if (mask == nullptr || mask->dim() == 0) return false;
  const size_t end = blocks->first_dim + mask->dim();
  if (end > self.dim()) return false;
  for (size_t k = 0; k < mask->dim(); ++k) {
    if (mask->size(k) != self.size(blocks->first_dim + k)) return false;
  }
  for (size_t d = 0; d < blocks->first_dim; ++d) blocks->outer *= self.size(d);
  for (size_t d = end; d < self.dim(); ++d) blocks->inner *= self.size(d);
  return true;
}

void index_mask_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[2]->to_tensor();
  MaskBlocks blocks;
  if (!mask_blocks(self, args[1]->to_tensor_list(), &blocks)) return index_tensor_out(ctx, args);
  const Tensor& mask = *blocks.mask;
  const int64_t cells = mask.numel();
  // Bool and uint8 elements are single bytes: nonzero selects.
  const uint8_t* bits = static_cast<const uint8_t*>(mask.const_data_ptr());
  if (!dense_path::is_dense(mask) || (cells > 0 && bits == nullptr)) {
    return index_tensor_out(ctx, args);
  }
  int64_t selected = 0;
  for (int64_t p = 0; p < cells; ++p) selected += bits[p] != 0;
  const SizesType count = static_cast<SizesType>(selected);
  if (!fit_out(self, blocks.first_dim, {&count, 1}, blocks.first_dim + mask.dim(), out)) {
    return index_tensor_out(ctx, args);
  }
  if (out.numel() == 0) return set_return(args, 3, *args[2]);
  const char* from = static_cast<const char*>(self.const_data_ptr());
  char* to = static_cast<char*>(out.mutable_data_ptr());
  if (from == nullptr || to == nullptr || storage_overlaps(out, self) ||
      storage_overlaps(out, mask)) {
    return index_tensor_out(ctx, args);
  }
  set_return(args, 3, *args[2]);
  const size_t block_bytes = static_cast<size_t>(blocks.inner) * self.element_size();
  for (int64_t o = 0; o < blocks.outer; ++o) {
    const char* plane = from + static_cast<size_t>(o * cells) * block_bytes;
    for (int64_t p = 0; p < cells; ++p) {
      if (bits[p] == 0) continue;
      std::memcpy(to, plane + static_cast<size_t>(p) * block_bytes, block_bytes);
      to += block_bytes;
    }
  }
}

// One mask among integer indices (util/index_mixed.h).
void index_mixed_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[2]->to_tensor();
  index_mixed::Blocks blocks;
  if (!dense_path::is_dense(self) || !dense_path::is_dense(out) ||
      !index_mixed::plan(self, args[1]->to_tensor_list(), &blocks) ||
      !index_mixed::indices_in_range(self, blocks) ||
      !fit_out(self, blocks.first_dim, blocks.broadcast.span(), blocks.end_dim, out)) {
    return index_tensor_out(ctx, args);
  }
  if (out.numel() == 0) return set_return(args, 3, *args[2]);
  char* to = static_cast<char*>(out.mutable_data_ptr());
  bool apart = self.const_data_ptr() != nullptr && to != nullptr && !storage_overlaps(out, self);
  for (size_t e = 0; apart && e < blocks.count; ++e) {
    apart = !storage_overlaps(out, *blocks.entries[e].tensor);
  }
  if (!apart) return index_tensor_out(ctx, args);
  set_return(args, 3, *args[2]);
  index_mixed::copy_blocks(self, blocks, to);
}

}  // namespace

Status index_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const Span<const Tensor> indices = args[1]->to_tensor_list();
  TL_RETURN_IF_ERROR(check_index_entries(self.tensor, indices, "indices"));
  bool dense = dense_path::is_dense(self.tensor) && dense_path::is_dense(out.tensor);
  for (const Tensor& t : indices) dense = dense && (!t.defined() || dense_path::is_dense(t));
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  IndexBlocks blocks;
  MaskBlocks mask;
  index_mixed::Blocks mixed;
  if (dense && index_blocks(self.tensor, indices, &blocks)) {
    call->eval = &index_dense_eval;
  } else if (dense && mask_blocks(self.tensor, indices, &mask)) {
    call->eval = &index_mask_eval;
  } else if (dense && index_mixed::entries(self.tensor, indices, &mixed)) {
    call->eval = &index_mixed_eval;
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
