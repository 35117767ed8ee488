// Winograd F(2x2, 3x3) for 3x3 stride-1 float convolutions in NHWC with
// OHWI filters (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015). Each 2x2 block of outputs ("tile") comes from a 4x4
// input patch: transformed to 16 values per channel (V = B^T d B), the
// channels are mixed by 16 independent products with the transformed filter
// (M_e = V_e x U_e, U = G g G^T, e = 0..15), and the 2x2 outputs come back
// as A^T M A. That is 16 multiplies per tile and channel pair where direct
// convolution needs 36: 2.25x fewer GEMM flops, for two cheap transforms.
// The transforms' coefficients are 0, +-1 and +-1/2, so results stay within
// a few float roundings of the direct sum.
//
// U is computed once (at load) into 16 * Cout * Cin floats; per call the
// scratch holds V [16][tiles][Cin] and M [16][tiles][Cout] of the whole
// layer, or, for layers with many tiles, each thread's V and M of one block
// of tiles at a time (transform, multiply and transform back while they
// are in cache).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/conv/conv2d.h"
#include "runtime/core/status.h"

namespace torchlight::optimized {

/// Whether `g` is a convolution this algorithm computes: 3x3, stride 1,
/// dilation 1.
bool winograd_f2x3_applies(const Conv2dGeometry& g);

/// Whether it is also faster than im2col + GEMM for `g`
/// (bench/xnnpack/conv_floor.cpp, ResNet-18's layers). With fewer tiles the
/// 16 products are matrix-vector shaped and stream the transformed filter,
/// 16/9 the size of the original (the 7x7 layers: slower). With fewer input
/// channels the products are too short for the GEMM to run well, while
/// im2col's are 9x longer (64 channels: 0.9x of im2col's speed; 128: 1.2x,
/// 256: 1.4x). All of that on the AVX2 GEMM: on the AVX-512 GEMM (Xeon,
/// Emerald Rapids) Winograd took 1.13x (128 channels) and 1.03x (256) of
/// im2col's time, so it is never preferred there.
inline constexpr int64_t kWinogradMinTiles = 32;
inline constexpr int64_t kWinogradMinInputChannels = 128;
bool winograd_f2x3_preferred(const Conv2dGeometry& g);

/// Floats of the transformed filter: 16 * out_channels * in_channels.
size_t winograd_f2x3_filter_floats(int64_t in_channels, int64_t out_channels);

/// U[e][o][i] from the OHWI filter weight[o][kh][kw][i].
void winograd_f2x3_transform_filter(const float* weight, int64_t in_channels,
                                    int64_t out_channels, float* transformed);

/// Floats of per-call scratch for `g` (V, M and a row of zeros).
size_t winograd_f2x3_scratch_floats(const Conv2dGeometry& g);

/// Computes the convolution of `p` (layout NHWC, winograd_f2x3_applies) from
/// the transformed filter, with p.bias and the output clamp; `scratch` holds
/// winograd_f2x3_scratch_floats(p.geometry) floats, 64-byte aligned.
/// p.weight and p.columns are not read. Errors: gemm's.
Status winograd_f2x3_conv2d(const Conv2dProblem& p, const float* transformed, float* scratch);

}  // namespace torchlight::optimized
