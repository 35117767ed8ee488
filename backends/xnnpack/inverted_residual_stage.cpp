#include "backends/xnnpack/inverted_residual_stage.h"

#include <algorithm>
#include <cmath>

#include "backends/xnnpack/depthwise_stage.h"
#include "backends/xnnpack/node_definition.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using Conv = fb_xnnpack::_XNNNodeConv;

const fb_xnnpack::XNode* node_at(const DefinitionContext& ctx, uint32_t n) {
  const auto* nodes = ctx.graph->xnodes();
  return n < nodes->size() ? nodes->Get(n) : nullptr;
}

bool is_activation(const DefinitionContext& ctx, uint32_t id) {
  return id < ctx.num_values && ctx.datatypes[id] == xnn_datatype_fp32 &&
         ctx.kinds[id] != ValueKind::kConstant && ctx.shapes[id].rank == 4;
}

// A constant fp32 tensor of exactly `dims`.
bool is_constant(const DefinitionContext& ctx, uint32_t id, std::initializer_list<size_t> dims) {
  if (id >= ctx.num_values || ctx.datatypes[id] != xnn_datatype_fp32 ||
      ctx.kinds[id] != ValueKind::kConstant || ctx.constant_data[id] == nullptr ||
      ctx.shapes[id].rank != dims.size()) {
    return false;
  }
  uint32_t d = 0;
  for (size_t size : dims) {
    if (ctx.shapes[id].dims[d++] != size) return false;
  }
  return true;
}

bool bias_ok(const DefinitionContext& ctx, uint32_t id, size_t channels) {
  return id == XNN_INVALID_VALUE_ID || is_constant(ctx, id, {channels});
}

// The convolution of node `n` when it is of `kind`, else null.
const Conv* conv_of(const DefinitionContext& ctx, uint32_t n, fb_xnnpack::XNodeUnion kind) {
  const fb_xnnpack::XNode* node = node_at(ctx, n);
  if (node == nullptr || node->xnode_union_type() != kind) return nullptr;
  const auto* t = static_cast<const Conv*>(node->xnode_union());
  if (t == nullptr || t->flags() != 0 || t->dilation_height() != 1 || t->dilation_width() != 1 ||
      !is_activation(ctx, t->input1_id()) || !is_activation(ctx, t->output_id())) {
    return nullptr;
  }
  return t;
}

// A 1x1 convolution with one group, stride 1 and no padding, reading `in`.
const Conv* pointwise(const DefinitionContext& ctx, uint32_t n, uint32_t in) {
  const Conv* t = conv_of(ctx, n, fb_xnnpack::XNodeUnion::XNNConv2d);
  if (t == nullptr || t->input1_id() != in || t->groups() != 1 || t->kernel_height() != 1 ||
      t->kernel_width() != 1 || t->subsampling_height() != 1 || t->subsampling_width() != 1 ||
      t->padding_top() != 0 || t->padding_bottom() != 0 || t->padding_left() != 0 ||
      t->padding_right() != 0) {
    return nullptr;
  }
  const size_t ic = t->group_input_channels(), oc = t->group_output_channels();
  if (ic == 0 || oc == 0 || ctx.shapes[in].dims[3] != ic ||
      ctx.shapes[t->output_id()].dims[3] != oc ||
      !is_constant(ctx, t->filter_id(), {oc, 1, 1, ic}) || !bias_ok(ctx, t->bias_id(), oc)) {
    return nullptr;
  }
  return t;
}

// Whether node `n` writes `value` read by node `n + 1` alone, and `value`
// is not the caller's.
bool feeds_next_only(const DefinitionContext& ctx, const ReadLog& reads, uint32_t value,
                     uint32_t n) {
  return ctx.kinds[value] == ValueKind::kInternal && sole_reader(reads, value) == n + 1;
}

// Folds a clamp at node `n + 1` reading `*value` alone into `*range`
// (moving `*value` to its output and `*n` on) when the two ranges meet.
void fold_clamp(const DefinitionContext& ctx, const ReadLog& reads, uint32_t* n, uint32_t* value,
                OutputRange* range, uint32_t* clamp) {
  *clamp = kNoNode;
  const fb_xnnpack::XNode* node = node_at(ctx, *n + 1);
  if (node == nullptr || node->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNClamp) return;
  const auto* c = node->xnode_union_as_XNNClamp();
  if (c == nullptr || c->flags() != 0 || c->input_id() != *value ||
      !is_activation(ctx, c->output_id()) || !feeds_next_only(ctx, reads, *value, *n)) {
    return;
  }
  const OutputRange folded = output_range(node);
  const float lo = std::max(range->min, folded.min), hi = std::min(range->max, folded.max);
  if (!(lo <= hi)) return;
  *range = {lo, hi};
  *value = c->output_id();
  *clamp = ++*n;
}

// The block's shape at its declared input dims, with every range.
optimized::InvertedResidualShape block_shape(const DefinitionContext& ctx,
                                             const InvertedResidualMatch& m) {
  const Conv* dw = conv_of(ctx, m.depthwise, fb_xnnpack::XNodeUnion::XNNDepthwiseConv2d);
  const auto* project = static_cast<const Conv*>(node_at(ctx, m.project)->xnode_union());
  const DeclaredShape& in = ctx.shapes[dw->input1_id()];
  optimized::InvertedResidualShape shape;
  if (m.expand != kNoNode) {
    const auto* expand = static_cast<const Conv*>(node_at(ctx, m.expand)->xnode_union());
    const DeclaredShape& x = ctx.shapes[expand->input1_id()];
    shape.batch = x.dims[0], shape.in_h = x.dims[1], shape.in_w = x.dims[2];
    shape.in_channels = x.dims[3];
    shape.expand_min = m.expand_range.min, shape.expand_max = m.expand_range.max;
  } else {
    shape.batch = in.dims[0], shape.in_h = in.dims[1], shape.in_w = in.dims[2];
    shape.in_channels = in.dims[3];
  }
  shape.expanded_channels = dw->groups();
  shape.out_channels = project->group_output_channels();
  shape.stride = dw->subsampling_height();
  shape.has_expand = m.expand != kNoNode;
  shape.residual = m.add != kNoNode;
  shape.depthwise_min = m.depthwise_range.min, shape.depthwise_max = m.depthwise_range.max;
  const OutputRange p = output_range(node_at(ctx, m.project));
  shape.project_min = p.min, shape.project_max = p.max;
  if (m.add != kNoNode) {
    const OutputRange a = output_range(node_at(ctx, m.add));
    shape.add_min = a.min, shape.add_max = a.max;
  }
  return shape;
}

}  // namespace

bool match_inverted_residual(const DefinitionContext& ctx, const ReadLog& reads, uint32_t first,
                             const ConvRouting& routing, InvertedResidualMatch* m) {
  *m = {kNoNode, kNoNode, kNoNode, kNoNode, kNoNode, kNoNode, kNoNode, {}, {}, false};
  uint32_t n = first;
  const fb_xnnpack::XNode* node = node_at(ctx, n);
  if (node == nullptr) return false;
  // The expand, when the block has one; else the block starts at the depthwise.
  uint32_t value = XNN_INVALID_VALUE_ID;
  uint32_t block_input = XNN_INVALID_VALUE_ID;
  size_t expanded = 0;
  if (node->xnode_union_type() == fb_xnnpack::XNodeUnion::XNNConv2d) {
    const auto* t = static_cast<const Conv*>(node->xnode_union());
    if (t == nullptr) return false;
    block_input = t->input1_id();
    if (!is_activation(ctx, block_input) || pointwise(ctx, n, block_input) == nullptr) {
      return false;
    }
    m->on_amx = runs_on_conv2d(ctx, node, routing);
    m->expand = n;
    expanded = t->group_output_channels();
    value = t->output_id();
    m->expand_range = output_range(node);
    fold_clamp(ctx, reads, &n, &value, &m->expand_range, &m->expand_clamp);
    if (!feeds_next_only(ctx, reads, value, n)) return false;
    ++n;
  }
  const Conv* dw = conv_of(ctx, n, fb_xnnpack::XNodeUnion::XNNDepthwiseConv2d);
  if (dw == nullptr) return false;
  if (m->expand == kNoNode) block_input = dw->input1_id();
  const size_t channels = dw->groups();
  if (dw->input1_id() != (m->expand == kNoNode ? block_input : value) || channels == 0 ||
      (m->expand != kNoNode && expanded != channels) ||
      dw->group_input_channels() != 1 || dw->group_output_channels() != 1 ||
      dw->kernel_height() != 3 || dw->kernel_width() != 3 ||
      dw->subsampling_height() != dw->subsampling_width() ||
      (dw->subsampling_height() != 1 && dw->subsampling_height() != 2) ||
      dw->padding_top() != 1 || dw->padding_bottom() != 1 || dw->padding_left() != 1 ||
      dw->padding_right() != 1 || ctx.shapes[dw->input1_id()].dims[3] != channels ||
      ctx.shapes[dw->output_id()].dims[3] != channels ||
      !is_constant(ctx, dw->filter_id(), {1, 3, 3, channels}) ||
      !bias_ok(ctx, dw->bias_id(), channels)) {
    return false;
  }
  m->depthwise = n;
  value = dw->output_id();
  m->depthwise_range = output_range(node_at(ctx, n));
  fold_clamp(ctx, reads, &n, &value, &m->depthwise_range, &m->depthwise_clamp);
  if (!feeds_next_only(ctx, reads, value, n)) return false;
  ++n;
  const Conv* project = pointwise(ctx, n, value);
  if (project == nullptr || project->group_input_channels() != channels) return false;
  m->on_amx = m->on_amx || runs_on_conv2d(ctx, node_at(ctx, n), routing);
  m->project = n;
  m->last = n;
  // The residual add: the projection's output and the block's input, same shape.
  const uint32_t projected = project->output_id();
  const fb_xnnpack::XNode* next = node_at(ctx, n + 1);
  if (next != nullptr && next->xnode_union_type() == fb_xnnpack::XNodeUnion::XNNAdd &&
      feeds_next_only(ctx, reads, projected, n)) {
    const auto* add = next->xnode_union_as_XNNAdd();
    const DeclaredShape& a = ctx.shapes[projected];
    const DeclaredShape& b = ctx.shapes[block_input];
    const bool same_shape = std::equal(a.dims, a.dims + 4, b.dims);
    const bool operands = add != nullptr && ((add->input1_id() == projected &&
                                              add->input2_id() == block_input) ||
                                             (add->input2_id() == projected &&
                                              add->input1_id() == block_input));
    if (operands && add->flags() == 0 && is_activation(ctx, add->output_id()) && same_shape &&
        dw->subsampling_height() == 1) {
      m->add = n + 1;
      m->last = n + 1;
    }
  }
  // Empty or huge declared shapes stay on XNNPACK.
  const optimized::InvertedResidualShape shape = block_shape(ctx, *m);
  if (*optimized::inverted_residual_unsupported(shape) != '\0') return false;
  // A block the conv2d routing would take part of runs on the row kernel
  // where that is faster (AVX2); otherwise only where its 1x1 layers run on
  // AMX tiles (the row kernel lost to conv2d on the AMX machine).
  if (m->on_amx && routing.row_kernel_beats_conv2d) {
    m->on_amx = false;
    return true;
  }
  const bool clamped_before_add =
      shape.residual && (shape.project_min > -INFINITY || shape.project_max < INFINITY);
  return !m->on_amx ||
         (optimized::inverted_residual_amx_allowed() && shape.has_expand && !clamped_before_add);
}

Result<InvertedResidualStage> make_inverted_residual_stage(const DefinitionContext& ctx,
                                                           const InvertedResidualMatch& m) {
  const Conv* dw = conv_of(ctx, m.depthwise, fb_xnnpack::XNodeUnion::XNNDepthwiseConv2d);
  const Conv* project = static_cast<const Conv*>(node_at(ctx, m.project)->xnode_union());
  const Conv* expand = m.expand == kNoNode
                           ? nullptr
                           : static_cast<const Conv*>(node_at(ctx, m.expand)->xnode_union());
  InvertedResidualStage s;
  s.node = m.expand != kNoNode ? m.expand : m.depthwise;
  s.input = expand != nullptr ? expand->input1_id() : dw->input1_id();
  s.output = m.add != kNoNode ? node_at(ctx, m.add)->xnode_union_as_XNNAdd()->output_id()
                              : project->output_id();
  s.shape = block_shape(ctx, m);
  const optimized::InvertedResidualShape& shape = s.shape;
  const char* why = optimized::inverted_residual_unsupported(shape);
  TL_CHECK_OR_RETURN(*why == '\0', Error::kInvalidProgram,
                     "XNNPACK node %u: inverted-residual block with %s", s.node, why);
  s.isa = m.on_amx ? optimized::InvertedResidualIsa::kAmx
                   : optimized::inverted_residual_default_isa();
  s.band_floats = optimized::inverted_residual_scratch_floats(shape, s.isa);
  const size_t floats = optimized::inverted_residual_packed_floats(shape, s.isa);
  auto* packed = static_cast<float*>(ctx.allocator->allocate(floats * sizeof(float), 64));
  TL_CHECK_OR_RETURN(packed != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory for XNNPACK node %u's inverted-residual weights (%zu floats)",
                     s.node, floats);
  auto constant = [&](uint32_t id) {
    return id == XNN_INVALID_VALUE_ID ? nullptr
                                      : static_cast<const float*>(ctx.constant_data[id]);
  };
  const bool split = optimized::pack_inverted_residual(
      shape, s.isa, expand != nullptr ? constant(expand->filter_id()) : nullptr,
      expand != nullptr ? constant(expand->bias_id()) : nullptr, constant(dw->filter_id()),
      constant(dw->bias_id()), constant(project->filter_id()), constant(project->bias_id()),
      packed);
  // inf or NaN in a 1x1 filter: the same packing serves the AVX-512 rows.
  if (!split) s.isa = optimized::InvertedResidualIsa::kAvx512;
  s.packed = packed;
  return s;
}

}  // namespace xnnpack
}  // namespace torchlight
