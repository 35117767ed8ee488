// Prepared evals of the shape family (permute_copy, transpose_copy,
// slice_copy, select_copy, expand_copy): out is a view of self, that is
// out's row-major dims each with the stride (in elements) it has in self,
// plus a start offset, and the copy is a loop specialised for the element
// size, with a memcpy per contiguous run.
//
// The kernel's prepare step checks once, at load, what the program fixes
// (out's dtype, dims, the kinds of the other arguments) and installs
// view_eval<kOut, kSize, kBuild, reference> when out is dense and self's
// element size is 1, 2, 4 or 8 (install()). On every run that eval builds
// the view from self's run-time sizes and strides with kBuild, which
// returns false for whatever the arguments do not allow (an index a dynamic
// dim put out of range...), resizes out when a dynamic dim changed its
// shape, and copies. Anything it does not take as is goes to the reference
// eval, which reports the error as before. Bytes are moved unchanged, so the
// results are identical to the reference's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/loop_split.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::view_gather {

/// Self as out sees it. Only the first `rank` entries are meaningful
/// (left uninitialised past that: this is built on every run).
struct View {
  size_t rank;
  int64_t offset;  // Elements from self's data to out's first element.
  SizesType sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];

  /// All of `t`, through its own sizes and strides.
  void init(const Tensor& t) {
    rank = t.dim();
    offset = 0;
    const Span<const SizesType> s = t.sizes();
    const Span<const StridesType> st = t.strides();
    for (size_t d = 0; d < rank; ++d) {
      sizes[d] = s[d];
      strides[d] = st[d];
    }
  }
  int64_t numel() const {
    int64_t n = 1;
    for (size_t d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
};

/// Contiguous runs up to this many bytes are copied inline (copy_run).
inline constexpr size_t kShortRunBytes = 512;

/// `n` elements of kSize bytes from `src` (every `stride`-th) to dense `dst`.
template <size_t kSize>
inline void copy_run(char* dst, const char* src, int64_t n, int64_t stride) {
  if (stride == 1) {
    const size_t bytes = static_cast<size_t>(n) * kSize;
    if (bytes > kShortRunBytes) {
      std::memcpy(dst, src, bytes);
      return;
    }
    // Short runs (an attention transpose's head of 48 floats: 192 bytes)
    // inline, a line at a time: a library call per run cost more than its copy.
    size_t i = 0;
    for (; i + 64 <= bytes; i += 64) std::memcpy(dst + i, src + i, 64);
    for (; i < bytes; i += kSize) std::memcpy(dst + i, src + i, kSize);
    return;
  }
  const int64_t step = stride * static_cast<int64_t>(kSize);
  for (int64_t i = 0; i < n; ++i, dst += kSize, src += step) std::memcpy(dst, src, kSize);
}

/// The view's elements as `outer` runs of `inner` elements each (run r
/// lands at dst + r * inner elements): dimensions of size 1 dropped and
/// neighbours merged where the strides allow, so a contiguous slice is one
/// run per outer index.
struct Runs {
  size_t rank;  // Merged dims; 0 for one element.
  int64_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  int64_t offset;  // Elements from self's data to the first element.
  int64_t inner;
  int64_t outer;

  explicit Runs(const View& view) : rank(0), offset(view.offset), inner(1), outer(1) {
    for (size_t d = 0; d < view.rank; ++d) {
      const int64_t size = view.sizes[d];
      const int64_t stride = view.strides[d];
      if (size == 1) continue;
      if (rank > 0 && strides[rank - 1] == stride * size) {
        sizes[rank - 1] *= size;
        strides[rank - 1] = stride;
      } else {
        sizes[rank] = size;
        strides[rank] = stride;
        ++rank;
      }
    }
    if (rank == 0) return;
    inner = sizes[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) outer *= sizes[d];
  }

  /// Copies runs [begin, end) from self's data `src` into the dense `dst`
  /// (out's first element).
  template <size_t kSize>
  void copy(char* dst, const char* src, int64_t begin, int64_t end) const {
    src += offset * static_cast<int64_t>(kSize);
    if (rank == 0) {  // One element.
      std::memcpy(dst, src, kSize);
      return;
    }
    const size_t last = rank - 1;
    const int64_t inner_stride = strides[last];
    // The odometer at run `begin`.
    int64_t index[kMaxTensorDim];
    int64_t position = 0;
    for (size_t d = last, rest = static_cast<size_t>(begin); d-- > 0;) {
      index[d] = static_cast<int64_t>(rest % static_cast<size_t>(sizes[d]));
      rest /= static_cast<size_t>(sizes[d]);
      position += index[d] * strides[d];
    }
    const int64_t run_bytes = inner * static_cast<int64_t>(kSize);
    dst += begin * run_bytes;
    for (int64_t o = begin; o < end; ++o, dst += run_bytes) {
      copy_run<kSize>(dst, src + position * static_cast<int64_t>(kSize), inner, inner_stride);
      for (size_t d = last; d-- > 0;) {  // Odometer carry over the outer dims.
        position += strides[d];
        if (++index[d] < sizes[d]) break;
        position -= sizes[d] * strides[d];
        index[d] = 0;
      }
    }
  }
};

/// Copies the view's elements (numel() > 0) from self's data `src` into
/// the dense `dst`, in out's row-major order.
template <size_t kSize>
void gather(char* dst, const char* src, const View& view) {
  const Runs runs(view);
  runs.copy<kSize>(dst, src, 0, runs.outer);
}

/// The prepared eval. kBuild(args, self, &view) -> bool builds the view for
/// this run. out = args[kOut] is dense (checked at load) with self's dtype.
/// Split::run(runs, run_bytes, copy) copies the runs (loop_split.h).
template <size_t kOut, size_t kSize, const auto& kBuild, KernelFunction reference,
          typename Split = SerialSplit>
void view_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  View view;
  if (!kBuild(args, self, &view) ||
      !dense_copy::fit_sizes({view.sizes, view.rank}, out)) {
    return reference(ctx, args);
  }
  if (out.numel() > 0) {
    const char* src = self.const_data_ptr<char>();
    char* dst = out.mutable_data_ptr<char>();
    if (src == nullptr || dst == nullptr || src == dst) return reference(ctx, args);
    const Runs runs(view);
    Split::run(runs.outer, runs.inner * static_cast<int64_t>(kSize),
               [&](int64_t begin, int64_t end) { runs.copy<kSize>(dst, src, begin, end); });
  }
  set_return(args, kOut + 1, *args[kOut]);
}

/// Installs view_eval when out = args[kOut] is dense and self's element
/// size has a specialised loop; returns whether it did. The caller has
/// checked out's dtype against self's.
template <size_t kOut, const auto& kBuild, KernelFunction reference,
          typename Split = SerialSplit>
bool install(Span<EValue*> args, PreparedCall* call) {
  if (!dense_path::is_dense(args[kOut]->to_tensor())) return false;
  switch (args[0]->to_tensor().element_size()) {
    case 1: call->eval = &view_eval<kOut, 1, kBuild, reference, Split>; return true;
    case 2: call->eval = &view_eval<kOut, 2, kBuild, reference, Split>; return true;
    case 4: call->eval = &view_eval<kOut, 4, kBuild, reference, Split>; return true;
    case 8: call->eval = &view_eval<kOut, 8, kBuild, reference, Split>; return true;
    default: return false;
  }
}

/// `dim` in [-rank, rank) wrapped into *out, as wrap_dim does (a 0-d
/// tensor takes -1 and 0), without building a Status: false when out of
/// range.
inline bool wrap(int64_t dim, size_t rank, size_t* out) {
  const int64_t n = rank == 0 ? 1 : static_cast<int64_t>(rank);
  if (dim < -n || dim >= n) return false;
  *out = static_cast<size_t>(dim < 0 ? dim + n : dim);
  return true;
}

}  // namespace torchlight::portable::view_gather
