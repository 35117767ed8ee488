// conv2d: float32 2-D convolution (one group, not transposed) as im2col +
// gemm, so convolutions run at the GEMM's speed instead of a direct loop's.
//
// Two layouts, each with the product that needs no weight repacking:
//  - NCHW (ATen's default): per image, out[Cout, P] = weight[Cout, K] x
//    columns[K, P] + bias, columns the image unfolded with K ordered
//    (cin, kh, kw) as an OIHW weight is; the output lands in NCHW.
//  - NHWC (channels-last; XNNPACK's layout, with OHWI filters): per image,
//    out[P, Cout] = rows[P, K] x weight[Cout, K]^T + bias, rows unfolded with
//    K ordered (kh, kw, cin), so each tap is one run of C input floats.
// P = out_h * out_w output pixels, K = in_channels * kernel_h * kernel_w.
// A 1x1 convolution with stride 1 and no padding is the image itself: no
// unfolding, and in NHWC the whole batch is one product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/status.h"

namespace torchlight::optimized {

/// One convolution's sizes; out_h / out_w follow from the rest
/// (conv2d_output_size) and must be positive.
struct Conv2dGeometry {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t in_h = 1;
  int64_t in_w = 1;
  int64_t out_channels = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;  // Zeros above and below.
  int64_t pad_w = 0;  // Zeros left and right.
  int64_t dilation_h = 1;
  int64_t dilation_w = 1;
  int64_t out_h = 1;
  int64_t out_w = 1;

  int64_t patch() const { return in_channels * kernel_h * kernel_w; }
  int64_t pixels() const { return out_h * out_w; }
  /// The image is already the unfolded matrix.
  bool is_pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 &&
           pad_w == 0;
  }
};

/// ATen's output size along one dimension, or 0 when the (dilated) kernel
/// does not fit the padded input.
int64_t conv2d_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                           int64_t dilation);

/// Floats of unfolding scratch one image needs (0 when pointwise).
size_t conv2d_columns_floats(const Conv2dGeometry& g);

enum class ConvLayout : uint8_t { kNchw, kNhwc };

/// The operands of one call. `columns` holds conv2d_columns_floats(g)
/// floats (may be null when that is 0); `bias` may be null.
struct Conv2dProblem {
  Conv2dGeometry geometry;
  ConvLayout layout = ConvLayout::kNchw;
  const float* input = nullptr;   // [N, C, H, W] or [N, H, W, C]
  const float* weight = nullptr;  // OIHW for kNchw, OHWI for kNhwc
  const float* bias = nullptr;    // [Cout]
  float* output = nullptr;        // [N, Cout, OH, OW] or [N, OH, OW, Cout]
  float* columns = nullptr;
  GemmWorkspace workspace;
  /// kNhwc only, optional: the [Cout, K] weight split for gemm's AMX path
  /// (gemm_amx_split_weight), so calls do not split it again.
  const void* weight_amx_split = nullptr;
  /// Outputs clamped to [output_min, output_max] (a fused ReLU / ReLU6, as
  /// XNNPACK's convolution nodes carry).
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
};

/// Runs the convolution on the thread pool. Errors: gemm's (kInternal for
/// a workspace with no slot).
Status conv2d(const Conv2dProblem& p);

}  // namespace torchlight::optimized
