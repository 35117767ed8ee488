// DepthwiseStage: an XNNPACK int8 depthwise 3x3 convolution (qint8 input
// and output per tensor, qcint8 filter per channel, optional qcint32 bias)
// run on depthwise_qs8.h's kernel, bit-identical to XNNPACK's operator, in
// about 0.45x of its time on AVX-512 and 0.55x on AVX2 (Zen 1;
// bench/xnnpack/dw_floor.cpp). A qint8
// clamp that alone reads its output, with the same quantization, is folded
// into it, as XNNPACK folds it into its own operator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/depthwise_qs8.h"
#include "runtime/core/result.h"

namespace fb_xnnpack {
struct XNode;
}

namespace torchlight {
namespace xnnpack {

inline constexpr uint32_t kNoNode = 0xFFFFFFFFu;

struct DepthwiseStage {
  uint32_t node;    // The convolution, for messages and profiling.
  uint32_t input;   // Payload value ids: [N, H, W, C].
  uint32_t output;  // The folded clamp's output when there is one.
  DepthwiseQs8Shape window;  // channels, strides, pad_top, pad_left.
  uint32_t pad_bottom = 0, pad_right = 0;
  DepthwiseQs8Quant quant;
  const void* packed = nullptr;  // pack_depthwise_qs8's layout.
};

/// Whether `node` is a depthwise convolution the kernel computes exactly,
/// on a CPU that runs one of its variants (depthwise_qs8_supported(): AVX2
/// or better): XNNDepthwiseConv2d, 3x3, dilation 1, strides 1 or 2, padding up to 2,
/// depth multiplier 1, no flags; non-constant qint8 input and output
/// quantized per tensor; a constant qcint8 [1, 3, 3, C] filter with its C
/// scales inline (channel_dim 3); no bias or a constant qcint32 [C] one;
/// every requantization scale below 256 (XNNPACK refuses larger ones, and
/// then should say so). Needs ctx after the whole graph's definition.
bool runs_on_depthwise_qs8(const DefinitionContext& ctx, const fb_xnnpack::XNode* node);

/// The XNNClamp to fold into depthwise node `node`: the one node reading its
/// output (not a graph output), writing a qint8 value quantized as the
/// convolution's output, whose range meets the convolution's (disjoint
/// ranges would fold into an empty one); else kNoNode.
uint32_t clamp_to_fold(const DefinitionContext& ctx, const ReadLog& reads, uint32_t node);

/// The stage of node `node` (runs_on_depthwise_qs8 holds) and, unless
/// kNoNode, the clamp `clamp` folded in: weights packed into ctx.allocator's
/// memory, output range quantized as XNNPACK quantizes it. Errors:
/// kDelegateMemoryAllocationFailed.
Result<DepthwiseStage> make_depthwise_stage(const DefinitionContext& ctx, uint32_t node,
                                            uint32_t clamp);

}  // namespace xnnpack
}  // namespace torchlight
