// Nodes with weights: fully-connected, 2-D convolution (regular, depthwise,
// transposed) and batch matrix multiply.
#include <cstdio>
#include <initializer_list>

#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

// XNNPACK packs weights using the node's channel counts and trusts the
// filter and bias to be that large; a smaller one would be read past.
Status check_dims(const DeclaredShape& shape, std::initializer_list<uint64_t> expected,
                  uint32_t index, const char* role) {
  bool ok = shape.rank == expected.size();
  size_t d = 0;
  for (uint64_t e : expected) {
    ok = ok && d < shape.rank && shape.dims[d] == e;
    ++d;
  }
  if (ok) return Error::kOk;
  char have[96];
  int n = 0;
  for (size_t k = 0; k < shape.rank && n < 80; ++k) {
    n += std::snprintf(have + n, sizeof(have) - static_cast<size_t>(n), "%s%zu", k ? "," : "",
                       shape.dims[k]);
  }
  if (shape.rank == 0) have[0] = '\0';
  return Status::error(Error::kInvalidProgram,
                       "XNNPACK node %u: %s has dims [%s], which do not match the node's "
                       "channels and window",
                       index, role, have);
}

Status check_bias(const DefinitionContext& ctx, uint32_t bias_id, uint64_t channels,
                  uint32_t index) {
  if (bias_id == XNN_INVALID_VALUE_ID) return Error::kOk;
  return check_dims(ctx.shapes[bias_id], {channels}, index, "bias");
}

Status define_fully_connected(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                              uint32_t index) {
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input1_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t filter, ctx.value(t->filter_id(), index, "filter"));
  TL_ASSIGN_OR_RETURN(uint32_t bias, ctx.optional_value(t->bias_id(), index, "bias"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  // Ids are checked above; shapes are indexed by them below.
  // XNNPACK takes the input channels from the filter and does not compare
  // them with the input's last dim; a mismatch would misread the input.
  const DeclaredShape& x = ctx.shapes[t->input1_id()];
  const DeclaredShape& w = ctx.shapes[t->filter_id()];
  TL_CHECK_OR_RETURN(w.rank == 2 && x.rank >= 1, Error::kInvalidProgram,
                     "XNNPACK node %u: fully-connected filter must be 2-d and input at least 1-d "
                     "(got %u and %u dims)",
                     index, w.rank, x.rank);
  const size_t channels = (t->flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0 ? w.dims[0] : w.dims[1];
  TL_CHECK_OR_RETURN(x.dims[x.rank - 1] == channels, Error::kInvalidProgram,
                     "XNNPACK node %u: input has %zu features, the filter expects %zu", index,
                     x.dims[x.rank - 1], channels);
  TL_RETURN_IF_ERROR(check_bias(
      ctx, t->bias_id(),
      (t->flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0 ? w.dims[1] : w.dims[0], index));
  const OutputRange range = output_range(node);
  return node_result(xnn_define_fully_connected(ctx.subgraph, range.min, range.max, in, filter, bias,
                                           out, t->flags()),
                index);
}

Status define_convolution(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t index) {
  const XNodeUnion kind = node->xnode_union_type();
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  TL_RETURN_IF_ERROR(check_spatial(
      {t->padding_top(), t->padding_right(), t->padding_bottom(), t->padding_left(),
       t->kernel_height(), t->kernel_width(), t->subsampling_height(), t->subsampling_width(),
       t->dilation_height(), t->dilation_width(), t->adjustment_height(), t->adjustment_width()},
      index, "convolution window"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input1_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t filter, ctx.value(t->filter_id(), index, "filter"));
  TL_ASSIGN_OR_RETURN(uint32_t bias, ctx.optional_value(t->bias_id(), index, "bias"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  const OutputRange range = output_range(node);
  const uint64_t groups = t->groups(), gic = t->group_input_channels();
  const uint64_t goc = t->group_output_channels();
  const uint64_t kh = t->kernel_height(), kw = t->kernel_width();
  if (kind == XNodeUnion::XNNDepthwiseConv2d) {
    // [1, kh, kw, channels * multiplier], bias [channels * multiplier].
    TL_CHECK_OR_RETURN(gic != 0, Error::kInvalidProgram,
                       "XNNPACK node %u: depthwise convolution with 0 input channels per group",
                       index);
    const uint64_t oc = groups * (goc / gic);
    TL_RETURN_IF_ERROR(check_dims(ctx.shapes[t->filter_id()], {1, kh, kw, oc}, index, "filter"));
    TL_RETURN_IF_ERROR(check_bias(ctx, t->bias_id(), oc, index));
  } else {
    // [groups * group_output_channels, kh, kw, group_input_channels].
    TL_RETURN_IF_ERROR(
        check_dims(ctx.shapes[t->filter_id()], {groups * goc, kh, kw, gic}, index, "filter"));
    TL_RETURN_IF_ERROR(check_bias(ctx, t->bias_id(), groups * goc, index));
  }
  if (kind == XNodeUnion::XNNDepthwiseConv2d) {
    // Depthwise: groups = input channels, each producing
    // group_output_channels / group_input_channels outputs.
    const uint32_t multiplier = t->group_output_channels() / t->group_input_channels();
    return node_result(xnn_define_depthwise_convolution_2d(
                      ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                      t->padding_left(), t->kernel_height(), t->kernel_width(),
                      t->subsampling_height(), t->subsampling_width(), t->dilation_height(),
                      t->dilation_width(), multiplier, t->groups(), range.min, range.max, in,
                      filter, bias, out, t->flags()),
                  index);
  }
  if (kind == XNodeUnion::XNNConvTranspose2d) {
    // The stride fields carry the upsampling factors.
    return node_result(xnn_define_deconvolution_2d(
                      ctx.subgraph, t->padding_top(), t->padding_right(), t->padding_bottom(),
                      t->padding_left(), t->adjustment_height(), t->adjustment_width(),
                      t->kernel_height(), t->kernel_width(), t->subsampling_height(),
                      t->subsampling_width(), t->dilation_height(), t->dilation_width(),
                      t->groups(), t->group_input_channels(), t->group_output_channels(),
                      range.min, range.max, in, filter, bias, out, t->flags()),
                  index);
  }
  return node_result(xnn_define_convolution_2d(
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
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_batch_matrix_multiply(ctx.subgraph, a, b, out, t->flags()), index);
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
