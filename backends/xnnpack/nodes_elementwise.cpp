// Element-wise nodes: unary ops (including clamp, leaky-relu, elu and
// convert) through xnn_define_unary, binary ops through xnn_define_binary.
#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

xnn_unary_operator unary_operator(XNodeUnion kind) {
  switch (kind) {
    case XNodeUnion::XNNSigmoid: return xnn_unary_sigmoid;
    case XNodeUnion::XNNClamp: return xnn_unary_clamp;
    case XNodeUnion::XNNFloor: return xnn_unary_floor;
    case XNodeUnion::XNNConvert: return xnn_unary_convert;
    case XNodeUnion::XNNSquareRoot: return xnn_unary_square_root;
    case XNodeUnion::XNNCeiling: return xnn_unary_ceiling;
    case XNodeUnion::XNNHardswish: return xnn_unary_hardswish;
    case XNodeUnion::XNNLeakyReLU: return xnn_unary_leaky_relu;
    case XNodeUnion::XNNNegate: return xnn_unary_negate;
    case XNodeUnion::XNNSquare: return xnn_unary_square;
    case XNodeUnion::XNNELU: return xnn_unary_elu;
    case XNodeUnion::XNNAbs: return xnn_unary_abs;
    case XNodeUnion::XNNReciprocalSquareRoot: return xnn_unary_reciprocal_square_root;
    case XNodeUnion::XNNLog: return xnn_unary_log;
    case XNodeUnion::XNNGelu: return xnn_unary_gelu;
    case XNodeUnion::XNNTanh: return xnn_unary_tanh;
    case XNodeUnion::XNNExp: return xnn_unary_exp;
    case XNodeUnion::XNNSin: return xnn_unary_sine;
    case XNodeUnion::XNNCos: return xnn_unary_cosine;
    default: return xnn_unary_invalid;
  }
}

xnn_binary_operator binary_operator(XNodeUnion kind) {
  switch (kind) {
    case XNodeUnion::XNNAdd: return xnn_binary_add;
    case XNodeUnion::XNNSubtract: return xnn_binary_subtract;
    case XNodeUnion::XNNMultiply: return xnn_binary_multiply;
    case XNodeUnion::XNNDiv: return xnn_binary_divide;
    case XNodeUnion::XNNMinimum: return xnn_binary_minimum;
    case XNodeUnion::XNNMaximum: return xnn_binary_maximum;
    case XNodeUnion::XNNPReLU: return xnn_binary_prelu;
    default: return xnn_binary_invalid;
  }
}

// Only these binary kinds read output_min_max (spec section 4).
bool binary_clamps(XNodeUnion kind) {
  return kind == XNodeUnion::XNNAdd || kind == XNodeUnion::XNNSubtract ||
         kind == XNodeUnion::XNNMultiply || kind == XNodeUnion::XNNDiv;
}

Status define_unary(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, uint32_t index,
                    xnn_unary_operator op) {
  const XNodeUnion kind = node->xnode_union_type();
  xnn_unary_params params{};
  uint32_t input = 0, output = 0, flags = 0;
  if (kind == XNodeUnion::XNNLeakyReLU) {
    const auto* t = node->xnode_union_as_XNNLeakyReLU();
    params.leaky_relu.negative_slope = t->negative_slope();
    input = t->input_id(), output = t->output_id(), flags = t->flags();
  } else if (kind == XNodeUnion::XNNELU) {
    const auto* t = node->xnode_union_as_XNNELU();
    params.elu.alpha = t->alpha();
    input = t->input_id(), output = t->output_id(), flags = t->flags();
  } else {
    const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(node->xnode_union());
    input = t->input_id(), output = t->output_id(), flags = t->flags();
    if (kind == XNodeUnion::XNNClamp) {
      const OutputRange range = output_range(node);
      params.clamp.min = range.min;
      params.clamp.max = range.max;
    }
  }
  const bool has_params = kind == XNodeUnion::XNNLeakyReLU || kind == XNodeUnion::XNNELU ||
                          kind == XNodeUnion::XNNClamp;
  TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(input, index, "input"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(output, index, "output"));
  const xnn_status s =
      xnn_define_unary(ctx.subgraph, op, has_params ? &params : nullptr, in, out, flags);
  return s == xnn_status_success ? Status(Error::kOk) : xnn_error(s, "node", index);
}

Status define_binary(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, uint32_t index,
                     xnn_binary_operator op) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode2x1*>(node->xnode_union());
  TL_ASSIGN_OR_RETURN(uint32_t a, ctx.value(t->input1_id(), index, "input 1"));
  TL_ASSIGN_OR_RETURN(uint32_t b, ctx.value(t->input2_id(), index, "input 2"));
  TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
  xnn_binary_params params{};
  const bool clamps = binary_clamps(node->xnode_union_type());
  if (clamps) {
    const OutputRange range = output_range(node);
    params.output_min = range.min;
    params.output_max = range.max;
  }
  const xnn_status s =
      xnn_define_binary(ctx.subgraph, op, clamps ? &params : nullptr, a, b, out, t->flags());
  return s == xnn_status_success ? Status(Error::kOk) : xnn_error(s, "node", index);
}

}  // namespace

Status define_elementwise_node(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                               uint32_t index) {
  const XNodeUnion kind = node->xnode_union_type();
  if (kind == XNodeUnion::XNNCopy) {
    const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(node->xnode_union());
    TL_ASSIGN_OR_RETURN(uint32_t in, ctx.value(t->input_id(), index, "input"));
    TL_ASSIGN_OR_RETURN(uint32_t out, ctx.output(t->output_id(), index, "output"));
    const xnn_status s = xnn_define_copy(ctx.subgraph, in, out, t->flags());
    return s == xnn_status_success ? Status(Error::kOk) : xnn_error(s, "node", index);
  }
  const xnn_unary_operator unary = unary_operator(kind);
  if (unary != xnn_unary_invalid) return define_unary(ctx, node, index, unary);
  const xnn_binary_operator binary = binary_operator(kind);
  if (binary != xnn_binary_invalid) return define_binary(ctx, node, index, binary);
  return Status::error(Error::kNotFound, "not an element-wise node");
}

}  // namespace xnnpack
}  // namespace torchlight
