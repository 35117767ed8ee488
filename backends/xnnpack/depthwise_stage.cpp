#include "backends/xnnpack/depthwise_stage.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/xnnpack/node_definition.h"
#include "backends/xnnpack/stage_plan.h"
#include "backends/xnnpack/value_view.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

const fb_xnnpack::PerTensorQuant* per_tensor_of(const DefinitionContext& ctx, uint32_t id) {
  Result<ValueView> view = view_value(ctx.graph->xvalues()->Get(id), id);
  if (!view.ok() || view->quantized == nullptr) return nullptr;
  return view->quantized->quant_params_as_PerTensorQuant();
}

bool is_qint8_activation(const DefinitionContext& ctx, uint32_t id) {
  return id < ctx.num_values && ctx.datatypes[id] == xnn_datatype_qint8 &&
         ctx.kinds[id] != ValueKind::kConstant && per_tensor_of(ctx, id) != nullptr;
}

// The filter's inline per-channel scales, or null.
const flatbuffers::Vector<float>* filter_scales(const DefinitionContext& ctx, uint32_t id) {
  Result<ValueView> view = view_value(ctx.graph->xvalues()->Get(id), id);
  if (!view.ok() || view->quantized == nullptr) return nullptr;
  const auto* q = view->quantized->quant_params_as_PerChannelQuant();
  if (q == nullptr || q->channel_dim() != 3 || q->scale_buffer_idx() != 0) return nullptr;
  return q->scale();
}

// XNNPACK's requantization scale for channel c (its operator's formula).
float requantization_scale(float input_scale, float kernel_scale, float output_scale) {
  return input_scale * kernel_scale / output_scale;
}

// XNNPACK's xnn_qs8_quantize: how it turns a float output bound into int8.
int8_t quantize_bound(float value, float scale, int32_t zero_point) {
  return static_cast<int8_t>(std::lrintf(
      std::fmin(std::fmax(value / scale + static_cast<float>(zero_point), -128.0f), 127.0f)));
}

}  // namespace

bool runs_on_depthwise_qs8(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  if (!depthwise_qs8_supported() ||
      node->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNDepthwiseConv2d) {
    return false;
  }
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  if (t == nullptr || t->flags() != 0 || t->kernel_height() != 3 || t->kernel_width() != 3 ||
      t->dilation_height() != 1 || t->dilation_width() != 1 ||
      (t->subsampling_height() != 1 && t->subsampling_height() != 2) ||
      (t->subsampling_width() != 1 && t->subsampling_width() != 2) ||
      t->group_input_channels() != 1 || t->group_output_channels() != 1 ||
      std::max({t->padding_top(), t->padding_bottom(), t->padding_left(), t->padding_right()}) >
          2) {
    return false;
  }
  const uint32_t in = t->input1_id(), out = t->output_id(), filter = t->filter_id();
  if (!is_qint8_activation(ctx, in) || !is_qint8_activation(ctx, out) ||
      filter >= ctx.num_values || ctx.datatypes[filter] != xnn_datatype_qcint8 ||
      ctx.kinds[filter] != ValueKind::kConstant || ctx.constant_data[filter] == nullptr) {
    return false;
  }
  const DeclaredShape& fs = ctx.shapes[filter];
  const size_t channels = t->groups();
  if (fs.rank != 4 || fs.dims[0] != 1 || fs.dims[1] != 3 || fs.dims[2] != 3 ||
      fs.dims[3] != channels || ctx.shapes[in].rank != 4 || ctx.shapes[in].dims[3] != channels) {
    return false;
  }
  const auto* scales = filter_scales(ctx, filter);
  if (scales == nullptr || scales->size() != channels) return false;
  const uint32_t bias = t->bias_id();
  if (bias != XNN_INVALID_VALUE_ID &&
      (bias >= ctx.num_values || ctx.datatypes[bias] != xnn_datatype_qcint32 ||
       ctx.kinds[bias] != ValueKind::kConstant || ctx.constant_data[bias] == nullptr ||
       ctx.shapes[bias].rank != 1 || ctx.shapes[bias].dims[0] != channels)) {
    return false;
  }
  const float in_scale = per_tensor_of(ctx, in)->scale();
  const float out_scale = per_tensor_of(ctx, out)->scale();
  for (size_t c = 0; c < channels; ++c) {
    const float s = requantization_scale(in_scale, scales->Get(static_cast<uint32_t>(c)), out_scale);
    if (!(s < 256.0f) || !std::isfinite(s)) return false;
  }
  return true;
}

uint32_t clamp_to_fold(const DefinitionContext& ctx, const ReadLog& reads, uint32_t node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(
      ctx.graph->xnodes()->Get(node)->xnode_union());
  const uint32_t out = t->output_id();
  if (ctx.kinds[out] != ValueKind::kInternal) return kNoNode;
  const uint32_t reader = sole_reader(reads, out);
  if (reader == kNoNode) return kNoNode;
  const fb_xnnpack::XNode* n = ctx.graph->xnodes()->Get(reader);
  if (n->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNClamp) return kNoNode;
  const auto* clamp = n->xnode_union_as_XNNClamp();
  if (clamp == nullptr || clamp->input_id() != out || clamp->flags() != 0) return kNoNode;
  const uint32_t clamped = clamp->output_id();
  if (!is_qint8_activation(ctx, clamped)) return kNoNode;
  const auto* a = per_tensor_of(ctx, out);
  const auto* b = per_tensor_of(ctx, clamped);
  if (a->scale() != b->scale() || a->zero_point() != b->zero_point()) return kNoNode;
  const OutputRange own = output_range(ctx.graph->xnodes()->Get(node));
  const OutputRange folded = output_range(n);
  if (!(std::max(own.min, folded.min) <= std::min(own.max, folded.max))) return kNoNode;
  return reader;
}

Result<DepthwiseStage> make_depthwise_stage(const DefinitionContext& ctx, uint32_t node,
                                            uint32_t clamp) {
  const fb_xnnpack::XNode* n = ctx.graph->xnodes()->Get(node);
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(n->xnode_union());
  DepthwiseStage s;
  s.node = node;
  s.input = t->input1_id();
  s.output = t->output_id();
  OutputRange range = output_range(n);
  if (clamp != kNoNode) {
    const fb_xnnpack::XNode* c = ctx.graph->xnodes()->Get(clamp);
    const OutputRange folded = output_range(c);
    range.min = std::max(range.min, folded.min);
    range.max = std::min(range.max, folded.max);
    s.output = c->xnode_union_as_XNNClamp()->output_id();
  }
  const size_t channels = t->groups();
  s.window.channels = channels;
  s.window.stride_h = t->subsampling_height();
  s.window.stride_w = t->subsampling_width();
  s.window.pad_top = t->padding_top();
  s.window.pad_left = t->padding_left();
  s.pad_bottom = t->padding_bottom();
  s.pad_right = t->padding_right();
  const auto* in_q = per_tensor_of(ctx, s.input);
  const auto* out_q = per_tensor_of(ctx, s.output);
  s.quant.input_zero_point = static_cast<int8_t>(in_q->zero_point());
  s.quant.output_zero_point = static_cast<int8_t>(out_q->zero_point());
  s.quant.output_min = quantize_bound(range.min, out_q->scale(), out_q->zero_point());
  s.quant.output_max = quantize_bound(range.max, out_q->scale(), out_q->zero_point());

  auto* scales = static_cast<float*>(ctx.allocator->allocate(channels * sizeof(float), 64));
  void* packed = ctx.allocator->allocate(depthwise_qs8_packed_bytes(channels), 64);
  TL_CHECK_OR_RETURN(scales != nullptr && packed != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory for XNNPACK node %u's depthwise weights (%zu channels)", node,
                     channels);
  const auto* kernel_scales = filter_scales(ctx, t->filter_id());
  for (size_t c = 0; c < channels; ++c) {
    scales[c] = requantization_scale(in_q->scale(), kernel_scales->Get(static_cast<uint32_t>(c)),
                                     out_q->scale());
  }
  const auto* bias = t->bias_id() == XNN_INVALID_VALUE_ID
                         ? nullptr
                         : static_cast<const int32_t*>(ctx.constant_data[t->bias_id()]);
  pack_depthwise_qs8(static_cast<const int8_t*>(ctx.constant_data[t->filter_id()]), bias, scales,
                     channels, packed);
  s.packed = packed;
  return s;
}

}  // namespace xnnpack
}  // namespace torchlight
