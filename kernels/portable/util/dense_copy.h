// Prepared paths of the data-movement family (clone, _to_copy,
// _to_dim_order_copy, alias/detach/lift_fresh copies, view_copy,
// permute_copy, transpose_copy, unsqueeze_copy...).
//
// What such a kernel checks that does not change between runs (out's dtype
// against self's, a memory format or dim order argument, which is a
// constant of the program) its prepare step checks once, at load, naming
// the argument. The eval it installs then only works out the shape (which
// dynamic dims may change), resizes out and moves the bytes: a memmove when
// self and out are both dense, the strided copy otherwise. Whatever it does
// not take as is (a failed resize, a tensor without data, an argument that
// changed since load) goes to the reference eval, which reports the error
// as before. Bytes are moved unchanged, so the results are identical.
#pragma once

#include <cstddef>
#include <cstring>

#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::dense_copy {

/// Moves self's elements into `out`, which has self's numel and element
/// size and has been resized: a memmove when both are dense (out may be
/// self's own memory, as the exporter plans reshapes), else the strided
/// copy. False when either has elements but no data.
inline bool move_elements(const Tensor& self, const Tensor& out) {
  const int64_t n = self.numel();
  if (n == 0) return true;
  const void* src = self.const_data_ptr();
  void* dst = out.mutable_data_ptr();
  if (src == nullptr || dst == nullptr) return false;
  if (dense_path::is_dense(self) && dense_path::is_dense(out)) {
    if (src != dst) std::memmove(dst, src, self.nbytes());
    return true;
  }
  if (src == dst) return false;  // An in-place reshape of another layout: the reference decides.
  copy_view(StridedView(out), StridedView(self));
  return true;
}

/// Gives `out` the sizes `sizes` when they differ from its own; false when
/// it cannot take them (the reference eval then reports why).
inline bool fit_sizes(Span<const SizesType> sizes, const Tensor& out) {
  bool same = sizes.size() == out.dim();
  for (size_t d = 0; same && d < sizes.size(); ++d) same = sizes[d] == out.size(d);
  return same || resize_tensor({out, "out"}, sizes).ok();
}

/// join_slabs when every tensor's slab is kBytes: a fixed-size copy each.
template <size_t kBytes>
void join_fixed_slabs(char* dst, const char* const* sources, size_t count, int64_t outer) {
  if (count == 2) {  // An interleave, written with indices so it vectorises.
    constexpr int64_t kSlab = static_cast<int64_t>(kBytes);
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + 2 * o * kSlab, sources[0] + o * kSlab, kBytes);
      std::memcpy(dst + (2 * o + 1) * kSlab, sources[1] + o * kSlab, kBytes);
    }
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(dst, sources[i] + o * static_cast<int64_t>(kBytes), kBytes);
      dst += kBytes;
    }
  }
}

/// Joins dense tensors along one axis (cat, stack): for each of `outer`
/// slices, each tensor's next `slab_bytes(t)` bytes go to `dst` in list order.
template <typename SlabBytes>
void join_slabs(char* dst, Span<const Tensor> tensors, int64_t outer, SlabBytes slab_bytes) {
  // Slabs of a few bytes each (upstream's Llama export stacks RoPE's two
  // [.., D/2, 1] halves into [.., D/2, 2]: 4-byte slabs, 18432 per call at a
  // 128-token stories15m prefill) cost a library memcpy call each, ~4 ns;
  // a copy of a size known at compile time is one move.
  constexpr size_t kMaxFixed = 8;
  const size_t first = tensors.empty() ? 0 : slab_bytes(tensors[0]);
  bool fixed = tensors.size() <= kMaxFixed && first <= 16 && (first & (first - 1)) == 0;
  const char* sources[kMaxFixed] = {};
  for (size_t i = 0; fixed && i < tensors.size(); ++i) {
    fixed = slab_bytes(tensors[i]) == first;
    sources[i] = tensors[i].const_data_ptr<char>();
  }
  if (fixed && first > 0) {
    switch (first) {
      case 1: return join_fixed_slabs<1>(dst, sources, tensors.size(), outer);
      case 2: return join_fixed_slabs<2>(dst, sources, tensors.size(), outer);
      case 4: return join_fixed_slabs<4>(dst, sources, tensors.size(), outer);
      case 8: return join_fixed_slabs<8>(dst, sources, tensors.size(), outer);
      default: return join_fixed_slabs<16>(dst, sources, tensors.size(), outer);
    }
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& t : tensors) {
      const size_t bytes = slab_bytes(t);
      if (bytes == 0) continue;
      std::memcpy(dst, t.const_data_ptr<char>() + o * static_cast<int64_t>(bytes), bytes);
      dst += bytes;
    }
  }
}

/// The eval of a same-shape copy of args[0] into out = args[kOut] of the
/// same dtype (clone, _to_copy and _to_dim_order_copy without a dtype
/// change, alias_copy...): the other arguments were checked at load.
template <size_t kOut, KernelFunction reference>
void same_shape_copy_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  if (!dense_path::fit_out(self, out) || !move_elements(self, out)) return reference(ctx, args);
  set_return(args, kOut + 1, *args[kOut]);
}

/// The eval of a reshaping copy of args[0] into args[kOut]: view_copy,
/// squeeze_copy, unsqueeze_copy. kShape(args, sizes, &rank) writes the
/// output shape (at most kMaxTensorDim dims) and returns false when the
/// arguments do not give one; the reference then reports why.
template <size_t kOut, const auto& kShape, KernelFunction reference>
void reshape_copy_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  SizesType sizes[kMaxTensorDim];
  size_t rank = 0;
  if (!kShape(args, sizes, &rank) || !fit_sizes({sizes, rank}, out) ||
      out.numel() != self.numel() || !move_elements(self, out)) {
    return reference(ctx, args);
  }
  set_return(args, kOut + 1, *args[kOut]);
}

/// The eval of a copy of a strided view of args[0] (permute_copy,
/// transpose_copy...) into args[kOut]. kView(args, &view) builds the view of
/// self, false when the arguments do not give one.
template <size_t kOut, const auto& kView, KernelFunction reference>
void view_copy_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  StridedView view(self);
  if (!kView(args, &view) || view.dim() > kMaxTensorDim) return reference(ctx, args);
  SizesType sizes[kMaxTensorDim];
  view.sizes(sizes);
  if (!fit_sizes({sizes, view.dim()}, out)) return reference(ctx, args);
  if (self.numel() > 0) {
    if (self.const_data_ptr() == nullptr || out.const_data_ptr() == nullptr ||
        self.const_data_ptr() == out.const_data_ptr()) {
      return reference(ctx, args);
    }
    copy_view(StridedView(out), view);
  }
  set_return(args, kOut + 1, *args[kOut]);
}

/// The load-time check every prepared copy shares: out has self's dtype.
/// Errors: kInvalidType naming 'out'.
inline Status check_out_dtype_is_self(Span<EValue*> args, size_t out_index) {
  const NamedTensor out{args[out_index]->to_tensor(), "out"};
  return check_same_dtype(out, args[0]->to_tensor().scalar_type(), "self");
}

}  // namespace torchlight::portable::dense_copy
