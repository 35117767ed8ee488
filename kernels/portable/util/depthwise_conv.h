// The prepared eval of a depthwise 2-D floating convolution.out (groups ==
// input channels C, weight [C * M, 1, KH, KW] for a channel multiplier M >=
// 1, so output channel oc reads input channel oc / M; not transposed),
// installed by convolution.out's prepare step once the reference's checks
// passed at load.
//
// Each channel is a 2-D stencil. For one output row the valid kernel rows
// are computed once, and for each kernel column the output columns whose
// input column lies inside the row, so the inner loops carry no bounds
// checks (and with stride 1 walk memory contiguously). Every output sums
// weight * input over the valid taps in the reference's order (kernel row,
// then column), starting from 0, and adds the bias last, as op_convolution's
// loops do, in the same accumulator type (opmath: float for float16 and
// bfloat16, double for float64): the results are bit-identical to the
// reference eval.
// Channels-last runs the same per-channel order over blocks of channels.
// Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/spatial.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::depthwise {

/// Most kernel taps (KH * KW) the prepared loops keep per channel.
constexpr int64_t kMaxTaps = 64;
/// Output columns (NCHW) or channels (channels-last) per accumulator block.
constexpr int64_t kBlock = 256;
constexpr int64_t kChannelBlock = 64;

struct Geometry {
  int64_t batch, in_channels, channels, H, W, OH, OW, KH, KW;  // channels: out's.
  int64_t multiplier;  // channels / in_channels.
  int64_t sh, sw, ph, pw, dh, dw;
};

/// Valid kernel indices k in [lo, hi): o * stride - pad + k * dilation in [0, size).
inline void valid_taps(int64_t o, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel,
                       int64_t size, int64_t* lo, int64_t* hi) {
  const int64_t base = o * stride - pad;
  *lo = std::max<int64_t>(0, ceil_div(-base, dilation));
  *hi = std::min(kernel, floor_div(size - 1 - base, dilation) + 1);
}

/// One [H, W] plane of channel with taps `w` (KH * KW) into [OH, OW].
/// kStride: the column stride when known at compile time (1 or 2, so the
/// column loop vectorises), else 0.
template <typename T, int64_t kStride>
void plane_nchw(const T* in, const opmath_t<T>* w, opmath_t<T> bias, T* out, const Geometry& g) {
  using Acc = opmath_t<T>;
  Acc acc[kBlock];
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    int64_t kh0, kh1;
    valid_taps(oh, g.sh, g.ph, g.dh, g.KH, g.H, &kh0, &kh1);
    for (int64_t ow0 = 0; ow0 < g.OW; ow0 += kBlock) {
      const int64_t ow1 = std::min(g.OW, ow0 + kBlock);
      for (int64_t j = 0; j < ow1 - ow0; ++j) acc[j] = Acc(0);
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const T* row = in + (oh * g.sh - g.ph + kh * g.dh) * g.W;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          // iw = ow * stride + shift must lie in [0, W).
          const int64_t shift = kw * g.dw - g.pw;
          const int64_t lo = std::max(ow0, ceil_div(-shift, g.sw));
          const int64_t hi = std::min(ow1, floor_div(g.W - 1 - shift, g.sw) + 1);
          const Acc wt = w[kh * g.KW + kw];
          Acc* a = acc - ow0;
          const int64_t sw = kStride != 0 ? kStride : g.sw;
          const T* x = row + shift;
          for (int64_t ow = lo; ow < hi; ++ow) a[ow] += wt * convert<Acc>(x[ow * sw]);
        }
      }
      T* dst = out + oh * g.OW + ow0;
      for (int64_t j = 0; j < ow1 - ow0; ++j) dst[j] = convert<T>(acc[j] + bias);
    }
  }
}

/// One image [H, W, C] into [OH, OW, C * M]; `taps` holds output channel
/// block [c0, c0 + cn)'s weights as taps[tap * kChannelBlock + j].
/// kOneToOne: M == 1, so the block's inputs are contiguous.
template <typename T, bool kOneToOne>
void block_channels_last(const T* in, const opmath_t<T>* taps, const opmath_t<T>* bias, T* out,
                         int64_t c0, int64_t cn, const Geometry& g) {
  using Acc = opmath_t<T>;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    int64_t kh0, kh1;
    valid_taps(oh, g.sh, g.ph, g.dh, g.KH, g.H, &kh0, &kh1);
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      int64_t kw0, kw1;
      valid_taps(ow, g.sw, g.pw, g.dw, g.KW, g.W, &kw0, &kw1);
      Acc acc[kChannelBlock];
      for (int64_t j = 0; j < cn; ++j) acc[j] = Acc(0);
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
        for (int64_t kw = kw0; kw < kw1; ++kw) {
          const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
          const T* pixel = in + (ih * g.W + iw) * g.in_channels;
          const Acc* wt = taps + (kh * g.KW + kw) * kChannelBlock;
          if constexpr (kOneToOne) {
            const T* x = pixel + c0;
            for (int64_t j = 0; j < cn; ++j) acc[j] += wt[j] * convert<Acc>(x[j]);
          } else {
            for (int64_t j = 0; j < cn; ++j) {
              acc[j] += wt[j] * convert<Acc>(pixel[(c0 + j) / g.multiplier]);
            }
          }
        }
      }
      T* dst = out + (oh * g.OW + ow) * g.channels + c0;
      for (int64_t j = 0; j < cn; ++j) dst[j] = convert<T>(acc[j] + bias[j]);
    }
  }
}

/// Reads stride, padding or dilation (checked at load: 1 or 2 values, at
/// least `min`). False when an earlier instruction changed it into
/// something else (the reference then reports it).
inline bool read_pair(const EValue& v, int64_t min, int64_t* h, int64_t* w) {
  const Span<const int64_t> list = v.to_int_list();
  if (list.empty() || list.size() > 2) return false;
  *h = list[0];
  *w = list[list.size() == 1 ? 0 : 1];
  return *h >= min && *w >= min;
}

/// convolution.out's installed eval for dtype T (float32, float64,
/// float16, bfloat16; args: input, weight, bias, stride,
/// padding, dilation, transposed, output_padding, groups, out); kLast:
/// input and out channels-last. A run-time shape the loops cannot take (a
/// kernel larger than a dynamic input, channels that no longer match the
/// weight), an out that cannot take the shape or missing data go to the
/// reference.
template <typename T, bool kLast, KernelFunction reference>
void depthwise_typed_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor in = args[0]->to_tensor();
  const Tensor weight = args[1]->to_tensor();
  const Tensor bias = args[2]->to_optional_tensor();
  const Tensor out = args[9]->to_tensor();
  Geometry g;
  g.batch = in.size(0);
  g.in_channels = in.size(1);
  g.channels = weight.size(0);
  g.H = in.size(2);
  g.W = in.size(3);
  g.KH = weight.size(2);
  g.KW = weight.size(3);
  if (args[6]->to_bool() || g.in_channels == 0 || args[8]->to_int() != g.in_channels ||
      g.channels % g.in_channels != 0 ||
      !read_pair(*args[3], 1, &g.sh, &g.sw) || !read_pair(*args[4], 0, &g.ph, &g.pw) ||
      !read_pair(*args[5], 1, &g.dh, &g.dw)) {
    return reference(ctx, args);
  }
  const int64_t extent_h = g.dh * (g.KH - 1) + 1;
  const int64_t extent_w = g.dw * (g.KW - 1) + 1;
  if (extent_h > g.H + 2 * g.ph || extent_w > g.W + 2 * g.pw) return reference(ctx, args);
  g.multiplier = g.channels / g.in_channels;
  g.OH = (g.H + 2 * g.ph - extent_h) / g.sh + 1;
  g.OW = (g.W + 2 * g.pw - extent_w) / g.sw + 1;
  const SizesType sizes[] = {static_cast<SizesType>(g.batch), static_cast<SizesType>(g.channels),
                             static_cast<SizesType>(g.OH), static_cast<SizesType>(g.OW)};
  bool same = true;
  for (size_t d = 0; d < 4; ++d) same = same && out.size(d) == sizes[d];
  if (!same && !resize_tensor({out, "out"}, sizes).ok()) return reference(ctx, args);
  using Acc = opmath_t<T>;
  const T* x = in.const_data_ptr<T>();
  const T* w = weight.const_data_ptr<T>();
  const T* b = bias.defined() ? bias.const_data_ptr<T>() : nullptr;
  T* y = out.mutable_data_ptr<T>();
  if (out.numel() > 0 && (x == nullptr || w == nullptr || y == nullptr ||
                          (bias.defined() && b == nullptr))) {
    return reference(ctx, args);
  }
  set_return(args, 10, *args[9]);
  if (out.numel() == 0) return;
  const int64_t ws0 = weight.strides()[0], ws2 = weight.strides()[2], ws3 = weight.strides()[3];
  const int64_t bs = bias.defined() ? bias.strides()[0] : 0;
  const int64_t taps = g.KH * g.KW;
  if constexpr (!kLast) {
    Acc wk[kMaxTaps];
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t c = 0; c < g.channels; ++c) {
        for (int64_t t = 0; t < taps; ++t) {
          wk[t] = convert<Acc>(w[c * ws0 + (t / g.KW) * ws2 + (t % g.KW) * ws3]);
        }
        const Acc bc = b != nullptr ? convert<Acc>(b[c * bs]) : Acc(0);
        const T* src = x + (n * g.in_channels + c / g.multiplier) * g.H * g.W;
        T* dst = y + (n * g.channels + c) * g.OH * g.OW;
        if (g.sw == 1) {
          plane_nchw<T, 1>(src, wk, bc, dst, g);
        } else if (g.sw == 2) {
          plane_nchw<T, 2>(src, wk, bc, dst, g);
        } else {
          plane_nchw<T, 0>(src, wk, bc, dst, g);
        }
      }
    }
  } else {
    Acc wt[kMaxTaps * kChannelBlock];
    Acc bc[kChannelBlock];
    for (int64_t c0 = 0; c0 < g.channels; c0 += kChannelBlock) {
      const int64_t cn = std::min(kChannelBlock, g.channels - c0);
      for (int64_t j = 0; j < cn; ++j) {
        const int64_t c = c0 + j;
        for (int64_t t = 0; t < taps; ++t) {
          wt[t * kChannelBlock + j] = convert<Acc>(w[c * ws0 + (t / g.KW) * ws2 + (t % g.KW) * ws3]);
        }
        bc[j] = b != nullptr ? convert<Acc>(b[c * bs]) : Acc(0);
      }
      for (int64_t n = 0; n < g.batch; ++n) {
        const int64_t image = g.H * g.W * g.in_channels;
        const int64_t out_image = g.OH * g.OW * g.channels;
        if (g.multiplier == 1) {
          block_channels_last<T, true>(x + n * image, wt, bc, y + n * out_image, c0, cn, g);
        } else {
          block_channels_last<T, false>(x + n * image, wt, bc, y + n * out_image, c0, cn, g);
        }
      }
    }
  }
}

/// The float32 eval (the one convolution.out installed first, under this name).
template <bool kLast, KernelFunction reference>
void depthwise_eval(KernelContext& ctx, Span<EValue*> args) {
  depthwise_typed_eval<float, kLast, reference>(ctx, args);
}

/// The eval for dtype T: float32's above, the others typed.
template <typename T, bool kLast, KernelFunction reference>
constexpr KernelFunction depthwise_eval_for() {
  if constexpr (std::is_same_v<T, float>) {
    return &depthwise_eval<kLast, reference>;
  } else {
    return &depthwise_typed_eval<T, kLast, reference>;
  }
}

}  // namespace torchlight::portable::depthwise
