#include "kernels/optimized/conv/conv2d.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "extension/threadpool/threadpool.h"
#include "runtime/core/result.h"

namespace torchlight::optimized {

namespace {

// Work items below this many floats are not worth a thread.
constexpr size_t kMinFloatsPerChunk = 16384;
// NHWC images with many output pixels are unfolded and multiplied a block
// of pixels at a time, each thread in its own block, so the unfolded rows
// stay in its cache (ResNet's 56x56x64 layers unfold to 7 MB otherwise).
constexpr int64_t kBlockFloats = 131072;
constexpr int64_t kMinBlockPixels = 64;
constexpr int64_t kMaxBlockPixels = 512;

size_t min_chunk(int64_t floats_per_item) {
  const size_t per_item = floats_per_item > 0 ? static_cast<size_t>(floats_per_item) : 1;
  return per_item >= kMinFloatsPerChunk ? 1 : kMinFloatsPerChunk / per_item;
}

// NCHW: row k = (c, kh, kw) of columns[K, P] holds, for every output pixel,
// the input value that tap multiplies (0 in the padding).
void unfold_nchw(const Conv2dGeometry& g, const float* image, float* columns) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t pixels = g.pixels();
  threadpool::parallel_for(
      static_cast<size_t>(g.patch()), min_chunk(pixels), [&](size_t begin, size_t end) {
        for (size_t row = begin; row < end; ++row) {
          const int64_t k = static_cast<int64_t>(row);
          const int64_t c = k / taps;
          const int64_t kh = (k % taps) / g.kernel_w;
          const int64_t kw = k % g.kernel_w;
          const float* plane = image + c * g.in_h * g.in_w;
          float* dst = columns + k * pixels;
          // Output columns whose input column iw = ow * stride - pad + kw * dilation
          // lies in [0, in_w): [ow_lo, ow_hi).
          const int64_t shift = kw * g.dilation_w - g.pad_w;
          int64_t ow_lo = shift >= 0 ? 0 : (-shift + g.stride_w - 1) / g.stride_w;
          int64_t ow_hi = (g.in_w - shift + g.stride_w - 1) / g.stride_w;
          if (ow_hi > g.out_w) ow_hi = g.out_w;
          if (ow_lo > ow_hi) ow_lo = ow_hi;
          for (int64_t oh = 0; oh < g.out_h; ++oh, dst += g.out_w) {
            const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
            if (ih < 0 || ih >= g.in_h) {
              std::memset(dst, 0, static_cast<size_t>(g.out_w) * sizeof(float));
              continue;
            }
            const float* src = plane + ih * g.in_w;
            for (int64_t ow = 0; ow < ow_lo; ++ow) dst[ow] = 0.0f;
            if (g.stride_w == 1) {
              std::memcpy(dst + ow_lo, src + ow_lo + shift,
                          static_cast<size_t>(ow_hi - ow_lo) * sizeof(float));
            } else {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow * g.stride_w + shift];
            }
            for (int64_t ow = ow_hi; ow < g.out_w; ++ow) dst[ow] = 0.0f;
          }
        }
      });
}

// NHWC: row p - first = (oh, ow) of rows[P, K] holds, for output pixels
// [first, end), the taps (kh, kw), each the C channels of one input pixel
// (zeros in the padding).
void unfold_nhwc_pixels(const Conv2dGeometry& g, const float* image, float* rows, size_t first,
                        size_t begin, size_t end) {
  const int64_t c = g.in_channels;
  const size_t run = static_cast<size_t>(c) * sizeof(float);
  const int64_t patch = g.patch();
  for (size_t pixel = begin; pixel < end; ++pixel) {
    const int64_t oh = static_cast<int64_t>(pixel) / g.out_w;
    const int64_t ow = static_cast<int64_t>(pixel) % g.out_w;
    float* dst = rows + static_cast<int64_t>(pixel - first) * patch;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw, dst += c) {
        const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
        if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) {
          std::memset(dst, 0, run);
        } else {
          std::memcpy(dst, image + (ih * g.in_w + iw) * c, run);
        }
      }
    }
  }
}

void unfold_nhwc(const Conv2dGeometry& g, const float* image, float* rows) {
  threadpool::parallel_for(static_cast<size_t>(g.pixels()), min_chunk(g.patch()),
                           [&](size_t begin, size_t end) {
                             unfold_nhwc_pixels(g, image, rows, 0, begin, end);
                           });
}

int64_t block_pixels(const Conv2dGeometry& g) {
  return std::min(kMaxBlockPixels, std::max(kMinBlockPixels, kBlockFloats / g.patch()));
}

// Threads for the blocked NHWC path: each needs a GEMM slot, two blocks of
// its own at least, and room for its block's rows in `columns` (sized for
// the whole image); 0 for the whole-image path.
int64_t blocked_threads(const Conv2dProblem& p) {
  const int64_t threads = static_cast<int64_t>(threadpool::num_threads());
  if (static_cast<int64_t>(p.workspace.slots) < threads) return 0;
  return p.geometry.pixels() >= 2 * threads * block_pixels(p.geometry) ? threads : 0;
}

// out[P, Cout] of one image, a block of pixels at a time per thread (the
// GEMM clamps each block as it stores it).
Status nhwc_blocked(const Conv2dProblem& p, const float* image, float* out, int64_t threads,
                    GemmProblem mm) {
  const Conv2dGeometry& g = p.geometry;
  const int64_t block = block_pixels(g);
  const int64_t blocks = (g.pixels() + block - 1) / block;
  Status failed = Error::kOk;
  std::atomic<bool> has_failed{false};
  threadpool::parallel_for(static_cast<size_t>(threads), 1, [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      float* rows = p.columns + static_cast<int64_t>(item) * block * g.patch();
      GemmProblem part = mm;
      part.workspace = GemmWorkspace{p.workspace.data + item * p.workspace.slot_floats,
                                     p.workspace.slot_floats, 1};
      part.a = ConstMatrix{rows, g.patch(), 1};
      for (int64_t b = static_cast<int64_t>(item); b < blocks; b += threads) {
        const size_t first = static_cast<size_t>(b * block);
        const size_t last = static_cast<size_t>(std::min(g.pixels(), (b + 1) * block));
        unfold_nhwc_pixels(g, image, rows, first, first, last);
        part.m = static_cast<int64_t>(last - first);
        part.c = out + static_cast<int64_t>(first) * g.out_channels;
        Status s = gemm(part);  // Nested: runs on this thread.
        if (!s.ok()) {
          if (!has_failed.exchange(true)) failed = s;
          return;
        }
      }
    }
  });
  return failed;
}

}  // namespace

int64_t conv2d_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                           int64_t dilation) {
  const int64_t extent = dilation * (kernel - 1) + 1;
  const int64_t padded = in + 2 * pad;
  return extent > padded ? 0 : (padded - extent) / stride + 1;
}

size_t conv2d_columns_floats(const Conv2dGeometry& g) {
  return g.is_pointwise() ? 0 : static_cast<size_t>(g.patch()) * static_cast<size_t>(g.pixels());
}

// The output clamp goes to gemm with the product (in the AMX path's store).
Status conv2d(const Conv2dProblem& p) {
  const Conv2dGeometry& g = p.geometry;
  const int64_t pixels = g.pixels();
  const int64_t patch = g.patch();
  const int64_t image_floats = g.in_channels * g.in_h * g.in_w;
  const int64_t out_floats = g.out_channels * pixels;
  GemmProblem mm;
  mm.workspace = p.workspace;
  mm.k = patch;
  mm.output_min = p.output_min;
  mm.output_max = p.output_max;
  if (p.bias != nullptr) mm.beta = 1.0f;
  if (p.layout == ConvLayout::kNhwc) {
    // rows[P, K] x weight[Cout, K]^T: the linear (NT) product.
    mm.n = g.out_channels;
    mm.b = ConstMatrix{p.weight, 1, patch};
    mm.b_amx_split = p.weight_amx_split;
    mm.ldc = g.out_channels;
    if (p.bias != nullptr) mm.addend = ConstMatrix{p.bias, 0, 1};
    if (g.is_pointwise()) {  // Every image's pixels in one product.
      mm.m = g.batch * pixels;
      mm.a = ConstMatrix{p.input, patch, 1};
      mm.c = p.output;
      return gemm(mm);
    }
    mm.m = pixels;
    mm.a = ConstMatrix{p.columns, patch, 1};
    const int64_t threads = blocked_threads(p);
    for (int64_t n = 0; n < g.batch; ++n) {
      if (threads > 0) {
        TL_RETURN_IF_ERROR(
            nhwc_blocked(p, p.input + n * image_floats, p.output + n * out_floats, threads, mm));
        continue;
      }
      unfold_nhwc(g, p.input + n * image_floats, p.columns);
      mm.c = p.output + n * out_floats;
      TL_RETURN_IF_ERROR(gemm(mm));
    }
    return Error::kOk;
  }
  // weight[Cout, K] x columns[K, P]: out[n] is [Cout, P], NCHW.
  mm.m = g.out_channels;
  mm.n = pixels;
  mm.a = ConstMatrix{p.weight, patch, 1};
  mm.ldc = pixels;
  if (p.bias != nullptr) mm.addend = ConstMatrix{p.bias, 1, 0};
  for (int64_t n = 0; n < g.batch; ++n) {
    const float* image = p.input + n * image_floats;
    if (g.is_pointwise()) {
      mm.b = ConstMatrix{image, pixels, 1};
    } else {
      unfold_nchw(g, image, p.columns);
      mm.b = ConstMatrix{p.columns, pixels, 1};
    }
    mm.c = p.output + n * out_floats;
    TL_RETURN_IF_ERROR(gemm(mm));
  }
  return Error::kOk;
}

}  // namespace torchlight::optimized
