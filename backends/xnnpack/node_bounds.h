// What the nodes of a payload can make XNNPACK (and our stages) compute and
// allocate at execute, from the declared shapes, checked at init.
//
// XNNPACK derives each node's output shape from its inputs' shapes; the
// output value's declared dims are not consulted. A convolution with large
// padding (or a broadcast, a pad, a resize, a fully-connected with many
// outputs) turns a small input into a large output, so the activation
// budget (the summed declared bytes, max_value_bytes) bounded nothing there:
// a 4.9 KB payload declaring a [1, 1, 1, 1] output for an 8x8 input padded
// by 5,000 made XNNPACK allocate 102 GB of indirection pointers.
#pragma once

#include "backends/xnnpack/definition_context.h"

namespace torchlight {
namespace xnnpack {

/// After define_nodes. For each node whose output can outgrow its inputs
/// (2-D convolutions, depthwise and transposed; pooling; binary element-wise
/// ops with broadcasting; batch matmul; fully-connected; constant pad;
/// bilinear resize; concatenation), the output its inputs' declared dims
/// give must hold no more elements than its output value declares, so the
/// activation budget covers every value at execute (inputs may not exceed
/// their declared dims). Besides, summed over the graph:
/// - XNNPACK's per-node buffers: a pointer per kernel tap per output pixel
///   of each windowed node (its indirection buffer) and the attention
///   scores of scaled dot-product attention, at most ctx.max_value_bytes;
/// - multiply-adds (convolutions, pooling taps, matmuls, attention), at most
///   ctx.max_multiply_adds.
/// Errors: kInvalidProgram naming the node and the bound.
Status check_node_bounds(const DefinitionContext& ctx);

}  // namespace xnnpack
}  // namespace torchlight
