// Pooling nodes: average, max and argmax 2-D pooling, and global average
// pooling (NHWC tensors).
#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

Status define_pooling(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                      uint32_t index) {
  const auto* t = static_cast<const fb_xnnpack::_XNNPooling2D*>(node->xnode_union());
  TL_RETURN_IF_ERROR(check_spatial(
      {t->padding_top(), t->padding_right(), t->padding_bottom(), t->padding_left(),
       t->pooling_height(), t->pooling_width(), t->stride_height(), t->stride_width(),
       t->dilation_height(), t->dilation_width()},
      index, "pooling window"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  const OutputRange range = output_range(node);
  if (node->xnode_union_type() == XNodeUnion::XNNAvgPooling2d) {
    // Average pooling takes no dilation.
    return node_result(xnn_define_average_pooling_2d(
                      ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                      t->padding_left(), t->pooling_height(), t->pooling_width(),
                      t->stride_height(), t->stride_width(), range.min, range.max, in, out,
                      t->flags()),
                  index);
  }
  return node_result(xnn_define_max_pooling_2d(ctx.subgraph, t->padding_top(), t->padding_right(),
                                          t->padding_bottom(), t->padding_left(),
                                          t->pooling_height(), t->pooling_width(),
                                          t->stride_height(), t->stride_width(),
                                          t->dilation_height(), t->dilation_width(), range.min,
                                          range.max, in, out, t->flags()),
                index);
}

Status define_argmax_pooling(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                             uint32_t index) {
  const auto* t = node->xnode_union_as_XNNArgMaxPooling2d();
  TL_RETURN_IF_ERROR(check_spatial({t->padding_top(), t->padding_right(), t->padding_bottom(),
                                    t->padding_left(), t->pooling_height(), t->pooling_width()},
                                   index, "pooling window"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t values, ctx.output(t->output_value_id(), index, "value output"));
  TL_ASSIGN_OR_RETURN(uint32_t indices, ctx.output(t->output_index_id(), index, "index output"));
  return node_result(xnn_define_argmax_pooling_2d(ctx.subgraph, t->padding_top(), t->padding_right(),
                                             t->padding_bottom(), t->padding_left(),
                                             t->pooling_height(), t->pooling_width(), in, values,
                                             indices, t->flags()),
                index);
}

Status define_global_average_pooling(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                                     uint32_t index) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(node->xnode_union());
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  const OutputRange range = output_range(node);
  // Deprecated in this XNNPACK but still the call upstream's runtime makes
  // (it is a mean over H and W plus the output clamp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const xnn_status s =
      xnn_define_global_average_pooling_2d(ctx.subgraph, range.min, range.max, in, out, t->flags());
#pragma GCC diagnostic pop
  return node_result(s, index);
}

}  // namespace

Status define_pooling_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                           uint32_t index) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNAvgPooling2d:
    case XNodeUnion::XNNMaxPooling2d: return define_pooling(ctx, node, index);
    case XNodeUnion::XNNArgMaxPooling2d: return define_argmax_pooling(ctx, node, index);
    case XNodeUnion::XNNGlobalAvgPooling2d: return define_global_average_pooling(ctx, node, index);
    default: return Status::error(Error::kNotFound, "not a pooling node");
  }
}

}  // namespace xnnpack
}  // namespace torchlight
