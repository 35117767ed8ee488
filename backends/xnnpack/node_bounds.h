// What the nodes of a payload can make XNNPACK (and our stages) compute and
// allocate at execute, from the shapes XNNPACK will compute, checked at init.
//
// XNNPACK derives each node's output shape from its inputs' shapes; the
// output value's declared dims are not consulted. A convolution with large
// padding (or a broadcast, a pad, a resize, a fully-connected with many
// outputs) turns a small input into a large output, so the activation
// budget (the summed declared bytes, max_value_bytes) bounded nothing there:
// a 4.9 KB payload declaring a [1, 1, 1, 1] output for an 8x8 input padded
// by 5,000 made XNNPACK allocate 102 GB of indirection pointers. So the
// bounds are computed from the shapes XNNPACK will compute
// (shape_inference.h), never from declared dims alone.
#pragma once

#include "backends/xnnpack/definition_context.h"

namespace torchlight {
namespace xnnpack {

/// After define_nodes. Infers every value's shape (shape_inference.h:
/// refusing outputs that outgrow or contradict their declared dims), then
/// sums over the graph, at the inferred shapes:
/// - XNNPACK's per-node buffers: a pointer per kernel tap per output pixel
///   of each windowed node (its indirection buffer) and the attention
///   scores of scaled dot-product attention, at most ctx.max_value_bytes;
/// - multiply-adds (convolutions, pooling taps, matmuls, fully-connected,
///   attention), at most ctx.max_multiply_adds.
/// Since every output fits its declared dims and inputs may not exceed
/// theirs, the activation budget (declared bytes) covers every value at
/// execute.
/// Errors: kInvalidProgram naming the node and the shape or bound;
/// kDelegateMemoryAllocationFailed.
Status check_node_bounds(const DefinitionContext& ctx);

}  // namespace xnnpack
}  // namespace torchlight
