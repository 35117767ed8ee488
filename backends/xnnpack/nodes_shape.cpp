// Data-movement and normalisation nodes: static reshape, transpose, slice,
// constant pad, bilinear resize, concatenate (2-5 inputs), softmax, and
// scaled dot-product attention.
#include <cstddef>

#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

// Copies a payload list into a zero-filled array of XNN_MAX_TENSOR_DIMS, so
// XNNPACK reading one entry per input dim never reads past the payload.
struct DimList {
  size_t values[XNN_MAX_TENSOR_DIMS] = {};
  size_t size = 0;
};

Result<DimList> dim_list(const flatbuffers::Vector<uint32_t>* list, uint32_t index,
                         const char* what) {
  DimList out;
  const uint32_t n = list == nullptr ? 0 : list->size();
  TL_CHECK_OR_RETURN(n >= 1 && n <= XNN_MAX_TENSOR_DIMS, Error::kInvalidProgram,
                     "XNNPACK node %u: %s has %u entries; expected 1 to %d", index, what, n,
                     XNN_MAX_TENSOR_DIMS);
  for (uint32_t i = 0; i < n; ++i) out.values[i] = list->Get(i);
  out.size = n;
  return out;
}

Status define_transpose(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                        uint32_t index) {
  const auto* t = node->xnode_union_as_XNNStaticTranspose();
  TL_ASSIGN_OR_RETURN(DimList perm, dim_list(t->perm(), index, "perm"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(
      xnn_define_static_transpose(ctx.subgraph, perm.size, perm.values, in, out, t->flags()),
      index);
}

Status define_reshape(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                      uint32_t index) {
  const auto* t = node->xnode_union_as_XNNStaticReshape();
  TL_ASSIGN_OR_RETURN(DimList shape, dim_list(t->new_shape(), index, "new_shape"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(
      xnn_define_static_reshape(ctx.subgraph, shape.size, shape.values, in, out, t->flags()),
      index);
}

Status define_slice(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, uint32_t index) {
  const auto* t = node->xnode_union_as_XNNStaticSlice();
  TL_ASSIGN_OR_RETURN(DimList offsets, dim_list(t->offsets(), index, "offsets"));
  TL_ASSIGN_OR_RETURN(DimList sizes, dim_list(t->sizes(), index, "sizes"));
  TL_CHECK_OR_RETURN(offsets.size == sizes.size, Error::kInvalidProgram,
                     "XNNPACK node %u: slice has %zu offsets but %zu sizes", index, offsets.size,
                     sizes.size);
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_static_slice(ctx.subgraph, offsets.size, offsets.values, sizes.values,
                                        in, out, t->flags()),
                index);
}

Status define_pad(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, uint32_t index) {
  const auto* t = node->xnode_union_as_XNNStaticConstantPad();
  TL_ASSIGN_OR_RETURN(DimList pre, dim_list(t->pre_paddings(), index, "pre_paddings"));
  TL_ASSIGN_OR_RETURN(DimList post, dim_list(t->post_paddings(), index, "post_paddings"));
  TL_CHECK_OR_RETURN(pre.size == post.size, Error::kInvalidProgram,
                     "XNNPACK node %u: pad has %zu pre and %zu post paddings", index, pre.size,
                     post.size);
  for (size_t d = 0; d < pre.size; ++d) {
    TL_RETURN_IF_ERROR(check_spatial({static_cast<uint32_t>(pre.values[d]),
                                      static_cast<uint32_t>(post.values[d])},
                                     index, "padding"));
  }
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_static_constant_pad(ctx.subgraph, pre.values, post.values,
                                               t->padding_value(), in, out, t->flags()),
                index);
}

Status define_resize(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, uint32_t index) {
  const auto* t = node->xnode_union_as_XNNStaticResizeBilinear2D();
  TL_RETURN_IF_ERROR(check_spatial({t->new_height(), t->new_width()}, index, "resize target"));
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_static_resize_bilinear_2d(ctx.subgraph, t->new_height(),
                                                     t->new_width(), in, out, t->flags()),
                index);
}

Status define_concatenate(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t index, int inputs) {
  const auto* t = static_cast<const fb_xnnpack::_XNNCat*>(node->xnode_union());
  const uint32_t ids[5] = {t->input1_id(), t->input2_id(), t->input3_id(), t->input4_id(),
                           t->input5_id()};
  uint32_t in[5] = {};
  static const char* const kRoles[5] = {"input 1", "input 2", "input 3", "input 4", "input 5"};
  for (int i = 0; i < inputs; ++i) {
    TL_ASSIGN_OR_RETURN(in[i], ctx.value(ids[i], index, kRoles[i]));
  }
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  TL_CHECK_OR_RETURN(t->axis() < XNN_MAX_TENSOR_DIMS, Error::kInvalidProgram,
                     "XNNPACK node %u: concatenation axis %u is out of range", index, t->axis());
  const int32_t axis = static_cast<int32_t>(t->axis());
  xnn_status s = xnn_status_invalid_parameter;
  switch (inputs) {
    case 2: s = xnn_define_concatenate2(ctx.subgraph, axis, in[0], in[1], out, t->flags()); break;
    case 3:
      s = xnn_define_concatenate3(ctx.subgraph, axis, in[0], in[1], in[2], out, t->flags());
      break;
    case 4:
      s = xnn_define_concatenate4(ctx.subgraph, axis, in[0], in[1], in[2], in[3], out, t->flags());
      break;
    default:
      s = xnn_define_concatenate5(ctx.subgraph, axis, in[0], in[1], in[2], in[3], in[4], out,
                                  t->flags());
  }
  return node_result(s, index);
}

Status define_softmax(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                      uint32_t index) {
  const auto* t = node->xnode_union_as_XNNSoftmax();
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_softmax(ctx.subgraph, in, out, t->flags()), index);
}

Status define_attention(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                        uint32_t index) {
  const auto* t = node->xnode_union_as_XNNScaledDotProductAttention();
  TL_ASSIGN_OR_RETURN(uint32_t q, ctx.value(t->query_id(), index, "query"));
  TL_ASSIGN_OR_RETURN(uint32_t k, ctx.value(t->key_id(), index, "key"));
  TL_ASSIGN_OR_RETURN(uint32_t v, ctx.value(t->value_id(), index, "value"));
  TL_ASSIGN_OR_RETURN(uint32_t scale, ctx.value(t->scale_id(), index, "scale"));
  TL_ASSIGN_OR_RETURN(uint32_t mask, ctx.value(t->mask_id(), index, "mask"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  return node_result(xnn_define_scaled_dot_product_attention(ctx.subgraph,
                                                        xnn_attention_logits_cap_type_none,
                                                        nullptr, q, k, v, scale, mask, out,
                                                        t->flags()),
                index);
}

}  // namespace

Status define_shape_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                         uint32_t index) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNStaticTranspose: return define_transpose(ctx, node, index);
    case XNodeUnion::XNNStaticReshape: return define_reshape(ctx, node, index);
    case XNodeUnion::XNNStaticSlice: return define_slice(ctx, node, index);
    case XNodeUnion::XNNStaticConstantPad: return define_pad(ctx, node, index);
    case XNodeUnion::XNNStaticResizeBilinear2D: return define_resize(ctx, node, index);
    case XNodeUnion::XNNConcatenate2: return define_concatenate(ctx, node, index, 2);
    case XNodeUnion::XNNConcatenate3: return define_concatenate(ctx, node, index, 3);
    case XNodeUnion::XNNConcatenate4: return define_concatenate(ctx, node, index, 4);
    case XNodeUnion::XNNConcatenate5: return define_concatenate(ctx, node, index, 5);
    case XNodeUnion::XNNSoftmax: return define_softmax(ctx, node, index);
    case XNodeUnion::XNNScaledDotProductAttention: return define_attention(ctx, node, index);
    default: return Status::error(Error::kNotFound, "not a shape node");
  }
}

}  // namespace xnnpack
}  // namespace torchlight
