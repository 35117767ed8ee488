// Defines every XNode of a verified payload in the XNNPACK subgraph, in
// list order, after define_values(). One file per group of node kinds:
//   nodes_elementwise.cpp  unary and binary element-wise ops, convert
//   nodes_linear.cpp       fully-connected, convolutions, batch matmul
//   nodes_pooling.cpp      max/avg/argmax/global-average pooling
//   nodes_shape.cpp        reshape, transpose, slice, pad, resize, concat,
//                          softmax, scaled dot-product attention
#pragma once

#include <initializer_list>

#include "backends/xnnpack/definition_context.h"

namespace fb_xnnpack {
struct XNode;
}

namespace torchlight {
namespace xnnpack {

/// Errors: kInvalidProgram naming the node when its kind is unknown, its
/// table is missing, an id is out of range or undefined, or XNNPACK rejects
/// it (shapes or datatypes that do not fit the op), and as
/// check_outputs_read().
Status define_nodes(const DefinitionContext& ctx);

/// Nodes [begin, end) only (one stage of a split graph, whose whole graph
/// define_nodes already checked); the node-level errors of define_nodes.
Status define_node_range(const DefinitionContext& ctx, uint32_t begin, uint32_t end);

/// After every node is defined: kInvalidProgram when a graph output has no
/// writer, or a node writes only values that no node reads and that are
/// not graph outputs (XNNPACK would prune it and then abort on its reads).
Status check_outputs_read(const DefinitionContext& ctx, uint32_t num_nodes);

/// Largest kernel, stride, dilation, padding, adjustment or resize target a
/// node may ask for; XNNPACK derives output shapes and buffers from them.
inline constexpr uint32_t kMaxSpatialParameter = 1u << 16;

/// kInvalidProgram naming `what` when any of `values` exceeds
/// kMaxSpatialParameter.
Status check_spatial(std::initializer_list<uint32_t> values, uint32_t node, const char* what);

// The clamp range of a node: its output_min_max, else (-inf, +inf).
struct OutputRange {
  float min;
  float max;
};
OutputRange output_range(const fb_xnnpack::XNode* node);

// Per group; each returns kNotFound (not an error yet) for kinds it does
// not handle, so define_nodes can ask the next group.
Status define_elementwise_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                               uint32_t index);
Status define_linear_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t index);
Status define_pooling_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                           uint32_t index);
Status define_shape_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                         uint32_t index);

}  // namespace xnnpack
}  // namespace torchlight
