// StagePlan: how one XNNPACK payload runs when some of its nodes go to
// Torchlight's kernels while everything else stays on XNNPACK:
// - float 2-D convolutions with one group that conv2d
//   (kernels/optimized/conv) runs faster than XNNPACK on this CPU (on AVX2:
//   most of them, in about 0.6x of XNNPACK's time; on AVX-512: only those
//   with filters of 2 MiB or more; bench/README.md);
// - 8da4w linears (qd8 input, block-wise 4-bit weights) go to
//   linear_8da4w where XNNPACK gets some row counts wrong (linear_stage.h);
// - int8 depthwise 3x3 convolutions go to depthwise_qs8 on AVX-512 CPUs
//   (about twice as fast as XNNPACK's 32-bit multiplies) and on AVX2 ones
//   (Zen 1: 0.45-0.67x of XNNPACK's 9p16c-avx2-mul32 time on every one of
//   MobileNetV2's 17 layers, bench/xnnpack/dw_floor.cpp, so no shape
//   stays), bit-identical (depthwise_stage.h), with the qint8 clamp after
//   each folded in. Without AVX2 none leaves XNNPACK.
//
// The nodes split, in payload order (a topological order), into stages:
// each such node is a stage of its own, and each run of nodes between
// them is an XNNPACK stage with a runtime of its own. A convert whose
// readers are all such linears is a stage that runs nothing: the linears
// read its float input. A value that one stage
// writes and another reads "crosses": it lives in the call's arguments when
// it is a graph input or output, else in the delegate's arena, and every
// XNNPACK stage that touches it sees it as an external value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"

namespace fb_xnnpack {
struct XNode;
}

namespace torchlight {
namespace xnnpack {

/// Where a value lives while the delegate runs.
enum class ValueHome : uint8_t {
  kInside,    // Inside one XNNPACK stage (or a constant): XNNPACK's business.
  kArgument,  // A graph input or output: the call's tensor.
  kArena,     // Crosses stages: the delegate's arena.
};

struct PlannedValue {
  ValueHome home = ValueHome::kInside;
  /// kArgument: the payload's external id (the argument index); kArena: an
  /// id after the payload's, for the XNNPACK stages' subgraphs.
  uint32_t external_id = 0;
  size_t offset = 0;    // kArena: byte offset in the arena.
  size_t capacity = 0;  // kArena: bytes of its declared (largest) shape.
  uint8_t element_bytes = 4;  // float32 or qint8.
};

enum class StageKind : uint8_t {
  kXnnpack,      // A run of nodes on one XNNPACK runtime.
  kConv2d,       // One convolution on conv2d.
  kLinear8da4w,  // One fully-connected on linear_8da4w (linear_stage.h).
  kSkip,         // A convert only kLinear8da4w stages read: nothing runs.
  kDepthwiseQs8,  // One int8 depthwise convolution on depthwise_qs8.
  kFolded,        // A clamp folded into the kDepthwiseQs8 stage before it.
  kInvertedResidual,  // A fused fp32 inverted-residual block (inverted_residual_stage.h).
};

/// One stage: nodes [begin, end); other than kXnnpack and kInvertedResidual
/// (the block's nodes), the one node `begin`.
struct Stage {
  uint32_t begin = 0;
  uint32_t end = 0;
  StageKind kind = StageKind::kXnnpack;
  uint32_t folded = 0xFFFFFFFFu;  // kDepthwiseQs8: the clamp folded in, if any.
};

struct StagePlan {
  Stage* stages = nullptr;
  uint32_t num_stages = 0;
  uint32_t num_convs = 0;
  uint32_t num_linears = 0;
  uint32_t num_depthwise = 0;
  uint32_t num_blocks = 0;  // kInvertedResidual stages.
  uint32_t num_xnn_stages = 0;
  /// False: nothing to split, run one runtime.
  bool split() const { return num_convs + num_linears + num_depthwise + num_blocks > 0; }
  PlannedValue* values = nullptr;  // Indexed by payload value id.
  uint32_t num_external_ids = 0;  // Each stage subgraph reserves this many.
  size_t arena_bytes = 0;
};

/// Which convolutions conv2d runs faster than XNNPACK, by shape, for the
/// GEMM instruction set in use (our GEMM's speed against XNNPACK's kernels
/// for the same CPU, measured per set; stage_plan.cpp has the figures). A
/// fixed rule, so a program splits the same way on every load.
struct ConvRouting {
  uint32_t min_input_channels = 0;
  uint64_t min_patch = 0;          // Products per output: channels x kernel.
  uint64_t min_filter_floats = 0;  // Output channels x patch.
  uint64_t min_output_channels = 0;
  // Multiply-adds of one call (output pixels x output channels x patch):
  // below it a layer's time is too short to gain from the faster GEMM.
  uint64_t min_macs = 0;
  // A fused inverted-residual block whose 1x1 layers this routing would
  // send to conv2d still runs fused on the row kernel (faster there than
  // XNNPACK's expand and depthwise around conv2d's 1x1: AVX2).
  bool row_kernel_beats_conv2d = false;
};
ConvRouting conv_routing_for(optimized::GemmIsa isa);
bool conv2d_is_faster(const ConvRouting& routing, uint64_t input_channels,
                      uint64_t output_channels, uint64_t kernel_h, uint64_t kernel_w);

/// Whether conv2d can run `node` exactly as XNNPACK would, and faster: an
/// XNNConv2d with one group whose shape `routing` sends to conv2d,
/// symmetric padding, no flags, float32 input and output, a constant
/// float32 filter (and bias, if any), and an unfolded input (im2col of the
/// declared shape) within ctx.max_value_bytes. Needs ctx after the whole graph's
/// definition (datatypes, kinds, constant_data).
bool runs_on_conv2d(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                    const ConvRouting& routing);

/// Whether `node` is an 8da4w linear linear_8da4w runs exactly: an
/// XNNFullyConnected without flags whose input an XNNConvert writes from a
/// non-constant float32 value into qdint8 quantized per row
/// (num_nonbatch_dims 1), whose filter is a constant qbint4 [N, K] (both
/// non-zero) with an even group size, whose bias is absent or a constant float32, and whose
/// output is float32. On success `*convert` is the convert's node. Needs ctx
/// after the whole graph's definition (blockwise, nonbatch_dims).
bool runs_on_linear_8da4w(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t* convert);

/// The one node reading `value` (however often), or 0xFFFFFFFF when no
/// node or several read it.
uint32_t sole_reader(const ReadLog& reads, uint32_t value);

/// Splits the graph whose full definition filled `ctx` (with constant_data
/// and producers) and `reads`. Arrays come from `allocator` (the delegate's).
/// A plan that does not split() means: no node qualifies, or a crossing
/// value is neither float32 nor qint8.
/// What leaves XNNPACK: convolutions unless `conv2d` is false (routed by
/// conv_routing_for(optimized::active_gemm_isa())), 8da4w linears when
/// `linears` is true, int8 depthwise convolutions when `depthwise` is true
/// (and runs_on_depthwise_qs8 holds), fp32 inverted-residual blocks on
/// the fused kernel when `blocks` is true (match_inverted_residual holds).
struct StageChoice {
  bool conv2d = true;
  bool linears = false;
  bool depthwise = false;
  bool blocks = false;
};

/// Errors: kDelegateMemoryAllocationFailed.
Result<StagePlan> plan_stages(const DefinitionContext& ctx, const ReadLog& reads,
                              uint32_t num_externs, StageChoice choice,
                              MemoryAllocator* allocator);

/// For XNNPACK stage `stage`: per value, kNotInStage when no node of the
/// stage touches it, else its external flags there (0, or INPUT / OUTPUT for
/// a value from or for another stage or the caller) and in `external_ids`
/// its id. Both arrays have ctx.num_values entries.
void stage_value_flags(const DefinitionContext& ctx, const ReadLog& reads, const StagePlan& plan,
                       uint32_t stage, uint32_t* flags, uint32_t* external_ids);

}  // namespace xnnpack
}  // namespace torchlight
