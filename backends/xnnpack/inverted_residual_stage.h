// InvertedResidualStage: MobileNetV2's inverted-residual block, found in an
// fp32 payload and run as one stage on kernels/optimized/fused's kernel
// (each thread a band of output rows, the expanded activations kept in its
// scratch) instead of three or four XNNPACK operators over whole tensors:
// 1.1-2x faster per block at 2 threads (bench/xnnpack/fused_block.cpp).
//
// The pattern, on consecutive nodes:
//   [XNNConv2d 1x1 expand (groups 1, stride 1, no padding) [-> XNNClamp]]
//   -> XNNDepthwiseConv2d 3x3 (stride 1 or 2 both ways, padding 1, depth
//      multiplier 1) [-> XNNClamp]
//   -> XNNConv2d 1x1 projection [-> XNNAdd with the block's input]
// Each node's output range (output_min_max) is kept; a clamp that alone
// reads a convolution's output is folded into its range (both forms occur:
// our exporter folds ReLU6 into the convolution, upstream's may leave a
// clamp). Every intermediate value must be read by the next node only and
// not be a graph output; filters and biases are fp32 constants. Blocks
// whose 1x1 layers the conv2d routing takes (stage_plan.h, on AMX from 64
// channels: MobileNetV2's later blocks) run on the kernel's kAmx variant
// (both 1x1 layers on AMX tiles over bands of rows) when it is allowed
// (inverted_residual_amx_allowed) and the block has an expand and no
// clamped projection before a residual; else they stay as they are. On
// the AVX2 routing (from 64 products per output: most of MobileNetV2's
// 1x1 layers) such blocks run on the row kernel instead, which measured
// faster there (ConvRouting::row_kernel_beats_conv2d).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/node_definition.h"
#include "backends/xnnpack/stage_plan.h"
#include "kernels/optimized/fused/inverted_residual.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace xnnpack {

/// The nodes of one block (kNoNode where absent), its last node, and the
/// expand's and depthwise's output ranges with their clamps folded in.
struct InvertedResidualMatch {
  uint32_t expand, expand_clamp, depthwise, depthwise_clamp, project, add;
  uint32_t last;
  OutputRange expand_range, depthwise_range;
  /// A 1x1 layer the conv2d routing takes (on AMX): the block runs on the
  /// kernel's kAmx variant, both 1x1 layers on AMX tiles.
  bool on_amx;
};

/// Whether the block starts at node `first` (see above); fills `match`.
/// Needs ctx after the whole graph's definition and its read log.
bool match_inverted_residual(const DefinitionContext& ctx, const ReadLog& reads, uint32_t first,
                             const ConvRouting& routing, InvertedResidualMatch* match);

struct InvertedResidualStage {
  uint32_t node;    // The block's first node, for messages and profiling.
  uint32_t input;   // Payload value ids: [N, H, W, in_channels].
  uint32_t output;  // [N, out_h, out_w, out_channels].
  /// Channels, stride, expand and residual flags and ranges; the call's
  /// batch, height and width are filled in per call.
  optimized::InvertedResidualShape shape;
  optimized::InvertedResidualIsa isa;
  const float* packed = nullptr;  // pack_inverted_residual's layout.
  /// Scratch floats per band at the declared (largest) input width.
  size_t band_floats = 0;
};

/// The stage of `match`: weights packed for the CPU's instruction set
/// (inverted_residual_default_isa) into ctx.allocator's memory. Errors:
/// kDelegateMemoryAllocationFailed.
Result<InvertedResidualStage> make_inverted_residual_stage(const DefinitionContext& ctx,
                                                           const InvertedResidualMatch& match);

}  // namespace xnnpack
}  // namespace torchlight
