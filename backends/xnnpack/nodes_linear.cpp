// Nodes with weights: fully-connected, 2-D convolution (regular, depthwise,
// transposed) and batch matrix multiply.
#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

Status result(xnn_status s, uint32_t index) {
  return s == xnn_status_success ? Status(Error::kOk) : xnn_error(s, "node", index);
}

Status define_fully_connected(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                              uint32_t index) {
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input1_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t filter, ctx.value(t->filter_id(), index, "filter"));
  TL_ASSIGN_OR_RETURN(uint32_t bias, ctx.optional_value(t->bias_id(), index, "bias"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.value(t->output_id(), index, "output"));
  const OutputRange range = output_range(node);
  return result(xnn_define_fully_connected(ctx.subgraph, range.min, range.max, in, filter, bias,
                                           out, t->flags()),
                index);
}

Status define_convolution(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t index) {
  const XNodeUnion kind = node->xnode_union_type();
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input1_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t filter, ctx.value(t->filter_id(), index, "filter"));
  TL_ASSIGN_OR_RETURN(uint32_t bias, ctx.optional_value(t->bias_id(), index, "bias"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.value(t->output_id(), index, "output"));
  const OutputRange range = output_range(node);
  if (kind == XNodeUnion::XNNDepthwiseConv2d) {
    // Depthwise: groups = input channels, each producing
    // group_output_channels / group_input_channels outputs.
    TL_CHECK_OR_RETURN(t->group_input_channels() != 0, Error::kInvalidProgram,
                       "XNNPACK node %u: depthwise convolution with 0 input channels per group",
                       index);
    const uint32_t multiplier = t->group_output_channels() / t->group_input_channels();
    return result(xnn_define_depthwise_convolution_2d(
                      ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                      t->padding_left(), t->kernel_height(), t->kernel_width(),
                      t->subsampling_height(), t->subsampling_width(), t->dilation_height(),
                      t->dilation_width(), multiplier, t->groups(), range.min, range.max, in,
                      filter, bias, out, t->flags()),
                  index);
  }
  if (kind == XNodeUnion::XNNConvTranspose2d) {
    // The stride fields carry the upsampling factors.
    return result(xnn_define_deconvolution_2d(
                      ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                      t->padding_left(), t->adjustment_height(), t->adjustment_width(),
                      t->kernel_height(), t->kernel_width(), t->subsampling_height(),
                      t->subsampling_width(), t->dilation_height(), t->dilation_width(),
                      t->groups(), t->group_input_channels(), t->group_output_channels(),
                      range.min, range.max, in, filter, bias, out, t->flags()),
                  index);
  }
  return result(xnn_define_convolution_2d(
                    ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                    t->padding_left(), t->kernel_height(), t->kernel_width(),
                    t->subsampling_height(), t->subsampling_width(), t->dilation_height(),
                    t->dilation_width(), t->groups(), t->group_input_channels(),
                    t->group_output_channels(), range.min, range.max, in, filter, bias, out,
                    t->flags()),
                index);
}

Status define_batch_matmul(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                           uint32_t index) {
  const auto* t = node->xnode_union_as_XNNBatchMatrixMultiply();
  TL_ASSIGN_OR_RETURN(uint32_t a, ctx.value(t->input1_id(), index, "input 1"));
  TL_ASSIGN_OR_RETURN(uint32_t b, ctx.value(t->input2_id(), index, "input 2"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.value(t->output_id(), index, "output"));
  return result(xnn_define_batch_matrix_multiply(ctx.subgraph, a, b, out, t->flags()), index);
}

}  // namespace

Status define_linear_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t index) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNFullyConnected: return define_fully_connected(ctx, node, index);
    case XNodeUnion::XNNConv2d:
    case XNodeUnion::XNNDepthwiseConv2d:
    case XNodeUnion::XNNConvTranspose2d: return define_convolution(ctx, node, index);
    case XNodeUnion::XNNBatchMatrixMultiply: return define_batch_matmul(ctx, node, index);
    default: return Status::error(Error::kNotFound, "not a linear node");
  }
}

}  // namespace xnnpack
}  // namespace torchlight
