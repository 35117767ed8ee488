// Prepared paths of the 2-D pooling kernels (max_pool2d_with_indices,
// avg_pool2d, _adaptive_avg_pool2d): see runtime/kernel/kernel.h.
//
// prepare (at load) runs the reference's checks of everything the program
// fixes (rank, dtypes, kernel_size / stride / padding / dilation values,
// divisor_override) with the reference's messages. When self and the outs
// share one dim order, contiguous NCHW or channels-last, and a dtype the
// loops take (float32, float64, float16, bfloat16; max pooling also int32,
// int64), it installs
// an eval that only computes: it re-reads the (checked) lists, sizes the
// outs for the run's input shape, and runs a loop with the window bounds
// hoisted out of the inner loop. What only the run can show (a kernel
// larger than a dynamic input, an out that cannot take the shape, missing
// data) goes to the reference eval, which reports it.
//
// The loops visit each window in the reference's order (pool_loops.h) and
// do the same arithmetic, so results are bit-identical: max keeps the first
// maximum and the last NaN; averages sum row by row in opmath and divide
// once (adaptive: by each window length in turn). Channels-last loops run
// the same per-channel order over a block of channels at a time.
// Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/pool_loops.h"
#include "kernels/portable/util/pooling.h"
#include "kernels/portable/util/spatial.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::pool_prepared {

/// The layouts the prepared loops take.
enum class Layout : uint8_t { kOther, kNchw, kChannelsLast };

inline Layout layout_of(const Tensor& t) {
  if (is_contiguous_dim_order(t.dim_order())) return Layout::kNchw;
  if (t.dim() == 4 && is_channels_last_dim_order(t.dim_order())) return Layout::kChannelsLast;
  return Layout::kOther;
}

/// The layout self and every out share, or kOther.
inline Layout common_layout(const Tensor& self, const Tensor& out, const Tensor* indices) {
  const Layout l = layout_of(self);
  if (layout_of(out) != l) return Layout::kOther;
  if (indices != nullptr && layout_of(*indices) != l) return Layout::kOther;
  return l;
}

/// Channels one channels-last block carries in its stack accumulators.
constexpr int64_t kChannelBlock = 64;
/// Output columns one NCHW max-pooling block carries.
constexpr int64_t kColumnBlock = 64;

/// One output position's clipped window along one dimension: input
/// positions start, start + dilation, ... below end (start >= 0).
struct Window {
  int64_t start;
  int64_t end;
};

inline Window max_window(int64_t o, int64_t stride, int64_t pad, int64_t kernel,
                         int64_t dilation, int64_t size) {
  int64_t start = o * stride - pad;
  const int64_t end = std::min(start + (kernel - 1) * dilation + 1, size);
  if (start < 0) start += ceil_div(-start, dilation) * dilation;
  return {start, end};
}

/// Sizes of out for `self` pooled by `p`, from self's run-time shape; false
/// when a pooled size is below 1 (the reference reports it).
inline bool pooled_sizes(const Tensor& self, const PoolParams& p, SizesType* sizes) {
  const size_t first = self.dim() - 2;
  for (size_t d = 0; d < first; ++d) sizes[d] = self.size(d);
  for (size_t i = 0; i < 2; ++i) {
    const size_t d = kMaxSpatialDims - 2 + i;
    const int64_t pooled = pooling_output_size(self.size(first + i), p.kernel[d], p.padding[d],
                                               p.stride[d], p.dilation[d], p.ceil_mode);
    if (pooled < 1) return false;
    sizes[first + i] = static_cast<SizesType>(pooled);
  }
  return true;
}

/// Gives `out` `sizes` unless it has them; false when it cannot.
inline bool fit(const Tensor& out, const SizesType* sizes, size_t rank) {
  bool same = out.dim() == rank;
  for (size_t d = 0; same && d < rank; ++d) same = out.size(d) == sizes[d];
  return same || resize_tensor({out, "out"}, {sizes, rank}).ok();
}

/// Calls fn(TypeTag<T>{}) for the floating dtypes the loops take: float32,
/// float64, float16 and bfloat16 (these two summed in float, as the
/// reference does).
template <typename Fn>
void visit_float_loop_type(ScalarType type, Fn&& fn) {
  switch (type) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); break;
    case ScalarType::kDouble: fn(TypeTag<double>{}); break;
    case ScalarType::kHalf: fn(TypeTag<Half>{}); break;
    case ScalarType::kBFloat16: fn(TypeTag<BFloat16>{}); break;
    default: break;
  }
}

/// Whether self has no zero-sized C/H/W dim (an empty batch is fine).
inline bool has_planes(const Tensor& self) {
  for (size_t d = self.dim() - 3; d < self.dim(); ++d) {
    if (self.size(d) <= 0) return false;
  }
  return true;
}

// ---- Max pooling with indices ----

template <typename T>
T lowest_value() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}

template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

/// NCHW: `planes` planes of H x W into planes of OH x OW. kStride: the
/// column stride when known at compile time (so the block loop vectorises),
/// else 0. float16/bfloat16 compare in float, as the reference does.
template <typename T, int64_t kStride = 0>
void max_pool_nchw(const T* in, T* out, int64_t* indices, int64_t planes, int64_t H, int64_t W,
                   int64_t OH, int64_t OW, const PoolParams& p) {
  const int64_t kh = p.kernel[1], kw = p.kernel[2];
  const int64_t sh = p.stride[1], sw = kStride != 0 ? kStride : p.stride[2];
  const int64_t ph = p.padding[1], pw = p.padding[2];
  const int64_t dh = p.dilation[1], dw = p.dilation[2];
  // Output columns [ow_lo, ow_hi) have their whole window inside the row.
  const int64_t ow_lo = std::min(OW, ceil_div(pw, sw));
  const int64_t ow_hi = std::max(ow_lo, std::min(OW, floor_div(W - 1 - (kw - 1) * dw + pw, sw) + 1));
  using V = opmath_t<T>;
  const V lowest = lowest_value<V>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* src = in + plane * H * W;
    T* dst = out + plane * OH * OW;
    int64_t* idx = indices + plane * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const Window h = max_window(oh, sh, ph, kh, dh, H);
      auto edge = [&](int64_t ow) {
        const Window w = max_window(ow, sw, pw, kw, dw, W);
        V best = lowest;
        int64_t best_index = h.start * W + w.start;
        for (int64_t ih = h.start; ih < h.end; ih += dh) {
          for (int64_t iw = w.start; iw < w.end; iw += dw) {
            const V v = static_cast<V>(src[ih * W + iw]);
            if (v > best || is_nan(v)) {
              best = v;
              best_index = ih * W + iw;
            }
          }
        }
        dst[oh * OW + ow] = static_cast<T>(best);
        idx[oh * OW + ow] = best_index;
      };
      for (int64_t ow = 0; ow < ow_lo; ++ow) edge(ow);
      // Interior columns a block at a time, each tap of the window across
      // the block: per output the same order (row, then column) as edge().
      for (int64_t ow0 = ow_lo; ow0 < ow_hi; ow0 += kColumnBlock) {
        const int64_t cn = std::min(kColumnBlock, ow_hi - ow0);
        V best[kColumnBlock];
        int64_t best_index[kColumnBlock];
        for (int64_t j = 0; j < cn; ++j) {
          best[j] = lowest;
          best_index[j] = h.start * W + (ow0 + j) * sw - pw;
        }
        for (int64_t ih = h.start; ih < h.end; ih += dh) {
          for (int64_t k = 0; k < kw; ++k) {
            const int64_t first = ih * W + ow0 * sw - pw + k * dw;  // Flat index for j = 0.
            const T* x = src + first;
            for (int64_t j = 0; j < cn; ++j) {
              const V v = static_cast<V>(x[j * sw]);
              const bool take = v > best[j] || is_nan(v);
              best[j] = take ? v : best[j];
              best_index[j] = take ? first + j * sw : best_index[j];
            }
          }
        }
        for (int64_t j = 0; j < cn; ++j) {
          dst[oh * OW + ow0 + j] = static_cast<T>(best[j]);
          idx[oh * OW + ow0 + j] = best_index[j];
        }
      }
      for (int64_t ow = ow_hi; ow < OW; ++ow) edge(ow);
    }
  }
}

/// Channels-last: `batch` images of [H, W, C] into [OH, OW, C].
template <typename T>
void max_pool_channels_last(const T* in, T* out, int64_t* indices, int64_t batch, int64_t C,
                            int64_t H, int64_t W, int64_t OH, int64_t OW, const PoolParams& p) {
  using V = opmath_t<T>;
  const V lowest = lowest_value<V>();
  for (int64_t n = 0; n < batch; ++n) {
    const T* src = in + n * H * W * C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const Window h = max_window(oh, p.stride[1], p.padding[1], p.kernel[1], p.dilation[1], H);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Window w = max_window(ow, p.stride[2], p.padding[2], p.kernel[2], p.dilation[2], W);
        const int64_t at = ((n * OH + oh) * OW + ow) * C;
        for (int64_t c0 = 0; c0 < C; c0 += kChannelBlock) {
          const int64_t cn = std::min(kChannelBlock, C - c0);
          V best[kChannelBlock];
          int64_t best_index[kChannelBlock];
          for (int64_t c = 0; c < cn; ++c) {
            best[c] = lowest;
            best_index[c] = h.start * W + w.start;
          }
          for (int64_t ih = h.start; ih < h.end; ih += p.dilation[1]) {
            for (int64_t iw = w.start; iw < w.end; iw += p.dilation[2]) {
              const T* x = src + (ih * W + iw) * C + c0;
              const int64_t flat = ih * W + iw;
              for (int64_t c = 0; c < cn; ++c) {
                const V v = static_cast<V>(x[c]);
                const bool take = v > best[c] || is_nan(v);
                best[c] = take ? v : best[c];
                best_index[c] = take ? flat : best_index[c];
              }
            }
          }
          for (int64_t c = 0; c < cn; ++c) {
            out[at + c0 + c] = static_cast<T>(best[c]);
            indices[at + c0 + c] = best_index[c];
          }
        }
      }
    }
  }
}

/// Reads kernel_size, stride, padding, dilation and ceil_mode, which
/// prepare checked (read_pool_params). False when a value is no longer one
/// the loops can take (an earlier instruction computed it): the reference
/// then checks and reports it.
inline bool read_checked_params(Span<EValue*> args, const EValue* dilation, PoolParams* p) {
  p->spatial = 2;
  p->ceil_mode = args[dilation != nullptr ? 5 : 4]->to_bool();
  const EValue* lists[] = {args[1], args[2], args[3], dilation};
  int64_t* dsts[] = {p->kernel, p->stride, p->padding, p->dilation};
  for (size_t l = 0; l < 4; ++l) {
    if (lists[l] == nullptr) continue;
    const Span<const int64_t> v = lists[l]->to_int_list();
    if (v.size() > 2 || (v.empty() && l != 1)) return false;
    for (size_t i = 0; i < 2; ++i) {
      // One value applies to both dims; an empty stride is the kernel.
      dsts[l][1 + i] = v.empty() ? p->kernel[1 + i] : v[v.size() == 1 ? 0 : i];
    }
  }
  for (size_t d = 1; d < kMaxSpatialDims; ++d) {
    if (p->kernel[d] <= 0 || p->stride[d] <= 0 || p->dilation[d] <= 0 || p->padding[d] < 0 ||
        p->padding[d] > p->kernel[d] / 2) {
      return false;
    }
  }
  return true;
}

/// The installed eval of max_pool2d_with_indices.out (args: self,
/// kernel_size, stride, padding, dilation, ceil_mode, out, indices).
template <typename T, Layout kLayout, KernelFunction reference>
void max_pool2d_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[6]->to_tensor();
  const Tensor indices = args[7]->to_tensor();
  PoolParams p;
  SizesType sizes[4];
  if (!read_checked_params(args, args[4], &p) || !has_planes(self) || !pooled_sizes(self, p, sizes) || !fit(out, sizes, self.dim()) ||
      !fit(indices, sizes, self.dim())) {
    return reference(ctx, args);
  }
  if (out.numel() == 0) return;
  const T* in = self.const_data_ptr<T>();
  T* o = out.mutable_data_ptr<T>();
  int64_t* x = indices.mutable_data_ptr<int64_t>();
  if (in == nullptr || o == nullptr || x == nullptr) return reference(ctx, args);
  const size_t r = self.dim();
  const int64_t batch = r == 4 ? self.size(0) : 1;
  const int64_t C = self.size(r - 3), H = self.size(r - 2), W = self.size(r - 1);
  if constexpr (kLayout == Layout::kChannelsLast) {
    max_pool_channels_last(in, o, x, batch, C, H, W, sizes[r - 2], sizes[r - 1], p);
  } else {
    if (p.stride[2] == 1) {
      max_pool_nchw<T, 1>(in, o, x, batch * C, H, W, sizes[r - 2], sizes[r - 1], p);
    } else if (p.stride[2] == 2) {
      max_pool_nchw<T, 2>(in, o, x, batch * C, H, W, sizes[r - 2], sizes[r - 1], p);
    } else {
      max_pool_nchw<T>(in, o, x, batch * C, H, W, sizes[r - 2], sizes[r - 1], p);
    }
  }
}

// ---- Average pooling ----

/// One output position's window along one dimension for averaging:
/// [start, end) clipped to the input, and the length of the window clipped
/// to the padded input (for count_include_pad).
struct AvgWindow {
  int64_t start;
  int64_t end;
  int64_t padded;
};

inline AvgWindow avg_window(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t size) {
  const int64_t start = o * stride - pad;
  const int64_t end = std::min(start + kernel, size + pad);
  return {std::max<int64_t>(start, 0), std::min(end, size), end - start};
}

/// avg_pool2d's NCHW interior: output columns [ow0, ow0 + cn) of row `oh`,
/// whose windows lie inside the row (no column clipping), summed a tap at a
/// time across the block; per output the reference's order (row, then
/// column).
template <typename T>
void avg_interior_block(const T* src, T* dst, int64_t W, const AvgWindow& h, int64_t ow0,
                        int64_t cn, const PoolParams& p, bool count_include_pad,
                        int64_t divisor) {
  using Acc = opmath_t<T>;
  const int64_t kw = p.kernel[2], sw = p.stride[2], pw = p.padding[2];
  if (h.end <= h.start) {  // Rows all padding: the reference gives 0.
    for (int64_t j = 0; j < cn; ++j) dst[j] = T(0);
    return;
  }
  Acc sum[kColumnBlock];
  for (int64_t j = 0; j < cn; ++j) sum[j] = Acc(0);
  for (int64_t ih = h.start; ih < h.end; ++ih) {
    for (int64_t k = 0; k < kw; ++k) {
      const T* x = src + ih * W + ow0 * sw - pw + k;
      for (int64_t j = 0; j < cn; ++j) sum[j] += static_cast<Acc>(x[j * sw]);
    }
  }
  // An interior window is the whole kernel wide, clipped rows aside.
  const int64_t volume = (h.end - h.start) * kw;
  const int64_t factor = divisor != 0 ? divisor : (count_include_pad ? h.padded * kw : volume);
  const Acc f = static_cast<Acc>(factor);
  for (int64_t j = 0; j < cn; ++j) dst[j] = static_cast<T>(sum[j] / f);
}

/// avg_pool2d over `batch` images; kLast: channels-last, else NCHW planes.
/// `divisor` 0: none.
template <typename T, bool kLast>
void avg_pool_2d(const T* in, T* out, int64_t batch, int64_t C, int64_t H, int64_t W, int64_t OH,
                 int64_t OW, const PoolParams& p, bool count_include_pad, int64_t divisor) {
  using Acc = opmath_t<T>;
  // NCHW output columns [ow_lo, ow_hi) have their whole window inside the
  // row (and not in the right padding).
  const int64_t ow_lo = kLast ? 0 : std::min(OW, ceil_div(p.padding[2], p.stride[2]));
  const int64_t ow_hi =
      kLast ? 0
            : std::max(ow_lo, std::min(OW, floor_div(W - p.kernel[2] + p.padding[2],
                                                     p.stride[2]) + 1));
  const int64_t planes = kLast ? batch : batch * C;
  const int64_t lanes = kLast ? C : 1;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* src = in + plane * H * W * lanes;
    T* dst = out + plane * OH * OW * lanes;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const AvgWindow h = avg_window(oh, p.stride[1], p.padding[1], p.kernel[1], H);
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (ow == ow_lo && ow_lo < ow_hi) {
          for (int64_t ow0 = ow_lo; ow0 < ow_hi; ow0 += kColumnBlock) {
            avg_interior_block(src, dst + oh * OW + ow0, W, h, ow0,
                               std::min(kColumnBlock, ow_hi - ow0), p, count_include_pad, divisor);
          }
          ow = ow_hi - 1;
          continue;
        }
        const AvgWindow w = avg_window(ow, p.stride[2], p.padding[2], p.kernel[2], W);
        const int64_t volume =
            std::max<int64_t>(h.end - h.start, 0) * std::max<int64_t>(w.end - w.start, 0);
        T* result = dst + (oh * OW + ow) * lanes;
        if (volume == 0) {
          for (int64_t c = 0; c < lanes; ++c) result[c] = T(0);
          continue;
        }
        const int64_t factor =
            divisor != 0 ? divisor : (count_include_pad ? h.padded * w.padded : volume);
        const Acc f = static_cast<Acc>(factor);
        for (int64_t c0 = 0; c0 < lanes; c0 += kChannelBlock) {
          const int64_t cn = std::min(kChannelBlock, lanes - c0);
          Acc sum[kChannelBlock];
          for (int64_t c = 0; c < cn; ++c) sum[c] = Acc(0);
          for (int64_t ih = h.start; ih < h.end; ++ih) {
            for (int64_t iw = w.start; iw < w.end; ++iw) {
              const T* x = src + (ih * W + iw) * lanes + c0;
              for (int64_t c = 0; c < cn; ++c) sum[c] += static_cast<Acc>(x[c]);
            }
          }
          for (int64_t c = 0; c < cn; ++c) result[c0 + c] = static_cast<T>(sum[c] / f);
        }
      }
    }
  }
}

/// The installed eval of avg_pool2d.out (args: self, kernel_size, stride,
/// padding, ceil_mode, count_include_pad, divisor_override, out).
template <typename T, Layout kLayout, KernelFunction reference>
void avg_pool2d_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[7]->to_tensor();
  PoolParams p;
  SizesType sizes[4];
  if (!read_checked_params(args, nullptr, &p) || !has_planes(self) || !pooled_sizes(self, p, sizes) || !fit(out, sizes, self.dim())) {
    return reference(ctx, args);
  }
  set_return(args, 8, *args[7]);
  if (out.numel() == 0) return;
  const T* in = self.const_data_ptr<T>();
  T* o = out.mutable_data_ptr<T>();
  if (in == nullptr || o == nullptr) return reference(ctx, args);
  const int64_t divisor = args[6]->is_none() ? 0 : args[6]->to_int();
  const size_t r = self.dim();
  const int64_t batch = r == 4 ? self.size(0) : 1;
  avg_pool_2d<T, kLayout == Layout::kChannelsLast>(
      in, o, batch, self.size(r - 3), self.size(r - 2), self.size(r - 1), sizes[r - 2],
      sizes[r - 1], p, args[5]->to_bool(), divisor);
}

// ---- Adaptive average pooling ----

/// _adaptive_avg_pool2d over `batch` images; kLast: channels-last.
template <typename T, bool kLast>
void adaptive_avg_pool_2d(const T* in, T* out, int64_t batch, int64_t C, int64_t H, int64_t W,
                          int64_t OH, int64_t OW) {
  using Acc = opmath_t<T>;
  const int64_t planes = kLast ? batch : batch * C;
  const int64_t lanes = kLast ? C : 1;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* src = in + plane * H * W * lanes;
    T* dst = out + plane * OH * OW * lanes;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = internal::adaptive_start(oh, OH, H);
      const int64_t h1 = internal::adaptive_end(oh, OH, H);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = internal::adaptive_start(ow, OW, W);
        const int64_t w1 = internal::adaptive_end(ow, OW, W);
        T* result = dst + (oh * OW + ow) * lanes;
        for (int64_t c0 = 0; c0 < lanes; c0 += kChannelBlock) {
          const int64_t cn = std::min(kChannelBlock, lanes - c0);
          Acc sum[kChannelBlock];
          for (int64_t c = 0; c < cn; ++c) sum[c] = Acc(0);
          for (int64_t ih = h0; ih < h1; ++ih) {
            const T* row = src + ih * W * lanes + c0;
            if (kLast) {
              for (int64_t iw = w0; iw < w1; ++iw) {
                for (int64_t c = 0; c < cn; ++c) sum[c] += static_cast<Acc>(row[iw * lanes + c]);
              }
            } else {
              Acc s = sum[0];
              for (int64_t iw = w0; iw < w1; ++iw) s += static_cast<Acc>(row[iw]);
              sum[0] = s;
            }
          }
          // The reference divides by each window length in turn.
          for (int64_t c = 0; c < cn; ++c) {
            Acc s = sum[c];
            s /= static_cast<Acc>(h1 - h0);
            s /= static_cast<Acc>(w1 - w0);
            result[c0 + c] = static_cast<T>(s);
          }
        }
      }
    }
  }
}

/// The installed eval of _adaptive_avg_pool2d.out (args: self, output_size,
/// out).
template <typename T, Layout kLayout, KernelFunction reference>
void adaptive_avg_pool2d_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[2]->to_tensor();
  const Span<const int64_t> output_size = args[1]->to_int_list();
  const size_t r = self.dim();
  if (output_size.size() != 2 || output_size[0] < 0 || output_size[1] < 0 ||
      output_size[0] > INT32_MAX || output_size[1] > INT32_MAX) {
    return reference(ctx, args);
  }
  SizesType sizes[4];
  for (size_t d = 0; d + 2 < r; ++d) sizes[d] = self.size(d);
  sizes[r - 2] = static_cast<SizesType>(output_size[0]);
  sizes[r - 1] = static_cast<SizesType>(output_size[1]);
  if (!has_planes(self) || !fit(out, sizes, r)) return reference(ctx, args);
  set_return(args, 3, *args[2]);
  if (out.numel() == 0) return;
  const T* in = self.const_data_ptr<T>();
  T* o = out.mutable_data_ptr<T>();
  if (in == nullptr || o == nullptr) return reference(ctx, args);
  const int64_t batch = r == 4 ? self.size(0) : 1;
  adaptive_avg_pool_2d<T, kLayout == Layout::kChannelsLast>(
      in, o, batch, self.size(r - 3), self.size(r - 2), self.size(r - 1), sizes[r - 2],
      sizes[r - 1]);
}

}  // namespace torchlight::portable::pool_prepared
