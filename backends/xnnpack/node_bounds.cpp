#include "backends/xnnpack/node_bounds.h"

#include <algorithm>
#include <cmath>

#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

// A shape in double: a hostile payload's products could wrap in 64 bits.
struct Dims {
  uint32_t rank = 0;
  double d[XNN_MAX_TENSOR_DIMS] = {};

  double elements() const {
    double n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
  double last(uint32_t from_end) const { return rank > from_end ? d[rank - 1 - from_end] : 1; }
};

Dims declared(const DefinitionContext& ctx, uint32_t id) {
  Dims s;
  s.rank = ctx.shapes[id].rank;
  for (uint32_t i = 0; i < s.rank; ++i) s.d[i] = static_cast<double>(ctx.shapes[id].dims[i]);
  return s;
}

// What one node asks for at its inputs' declared shapes.
struct NodeCost {
  uint32_t output_id = 0;
  double output = -1;  // Elements of its output; < 0 when it cannot outgrow its inputs.
  double multiply_adds = 0;
  double buffer_bytes = 0;  // XNNPACK's indirection pointers or attention scores.
};

// Output size along one dim of a window sliding over `in` plus `pad`
// (XNNPACK's and ATen's rule); 0 when the dilated window does not fit.
double window_out(double in, double pad, double kernel, double stride, double dilation) {
  const double span = dilation * (kernel - 1) + 1;
  if (stride == 0 || in + pad < span) return 0;
  return std::floor((in + pad - span) / stride) + 1;
}

// A windowed node over a [N, H, W, C] input giving `channels` outputs per
// pixel, each from `taps` products (XNNPACK keeps a pointer per kernel tap
// per output pixel of one image unless the window is a plain 1x1).
NodeCost windowed(const Dims& x, uint32_t output_id, double oh, double ow, double kernel_taps,
                  double channels, double per_output, bool pointwise) {
  NodeCost c;
  c.output_id = output_id;
  c.output = x.d[0] * oh * ow * channels;
  c.multiply_adds = c.output * per_output;
  c.buffer_bytes = pointwise ? 0 : oh * ow * kernel_taps * sizeof(void*);
  return c;
}

NodeCost convolution(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  const Dims x = declared(ctx, t->input1_id());
  if (x.rank != 4) return {};  // XNNPACK refuses it at reshape.
  const double kh = t->kernel_height(), kw = t->kernel_width(), taps = kh * kw;
  const double groups = t->groups(), gic = t->group_input_channels();
  const double goc = t->group_output_channels();
  const double pad_h = static_cast<double>(t->padding_top()) + t->padding_bottom();
  const double pad_w = static_cast<double>(t->padding_left()) + t->padding_right();
  if (node->xnode_union_type() == XNodeUnion::XNNConvTranspose2d) {
    // Each input pixel scatters a kernel-sized patch (stride = upsampling).
    const double oh = std::max(0.0, t->subsampling_height() * (x.d[1] - 1) +
                                        t->adjustment_height() +
                                        t->dilation_height() * (kh - 1) + 1 - pad_h);
    const double ow = std::max(0.0, t->subsampling_width() * (x.d[2] - 1) +
                                        t->adjustment_width() +
                                        t->dilation_width() * (kw - 1) + 1 - pad_w);
    NodeCost c = windowed(x, t->output_id(), oh, ow, taps, groups * goc, 0, false);
    c.multiply_adds = x.d[0] * x.d[1] * x.d[2] * groups * gic * goc * taps;
    return c;
  }
  const double oh =
      window_out(x.d[1], pad_h, kh, t->subsampling_height(), t->dilation_height());
  const double ow =
      window_out(x.d[2], pad_w, kw, t->subsampling_width(), t->dilation_width());
  const bool depthwise = node->xnode_union_type() == XNodeUnion::XNNDepthwiseConv2d;
  // Depthwise: groups input channels, goc / gic outputs each (define_convolution).
  const double channels = depthwise ? groups * std::floor(goc / std::max(gic, 1.0)) : groups * goc;
  const bool pointwise = taps == 1 && pad_h == 0 && pad_w == 0 &&
                         t->subsampling_height() == 1 && t->subsampling_width() == 1;
  return windowed(x, t->output_id(), oh, ow, taps, channels, depthwise ? taps : gic * taps,
                  pointwise);
}

NodeCost pooling(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  uint32_t input = 0, output = 0;
  double ph = 1, pw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pad_h = 0, pad_w = 0;
  if (node->xnode_union_type() == XNodeUnion::XNNArgMaxPooling2d) {
    const auto* t = node->xnode_union_as_XNNArgMaxPooling2d();
    input = t->input_id(), output = t->output_value_id();
    ph = sh = t->pooling_height(), pw = sw = t->pooling_width();  // Stride = window.
    pad_h = static_cast<double>(t->padding_top()) + t->padding_bottom();
    pad_w = static_cast<double>(t->padding_left()) + t->padding_right();
  } else {
    const auto* t = static_cast<const fb_xnnpack::_XNNPooling2D*>(node->xnode_union());
    input = t->input_id(), output = t->output_id();
    ph = t->pooling_height(), pw = t->pooling_width();
    sh = t->stride_height(), sw = t->stride_width();
    if (node->xnode_union_type() == XNodeUnion::XNNMaxPooling2d) {
      dh = t->dilation_height(), dw = t->dilation_width();  // Average pooling has none.
    }
    pad_h = static_cast<double>(t->padding_top()) + t->padding_bottom();
    pad_w = static_cast<double>(t->padding_left()) + t->padding_right();
  }
  const Dims x = declared(ctx, input);
  if (x.rank != 4) return {};
  return windowed(x, output, window_out(x.d[1], pad_h, ph, sh, dh),
                  window_out(x.d[2], pad_w, pw, sw, dw), ph * pw, x.d[3], ph * pw, false);
}

// Numpy broadcasting, right-aligned; a dim of 1 stretches to the other's.
Dims broadcast(const Dims& a, const Dims& b, uint32_t skip_last) {
  Dims out;
  out.rank = std::max(a.rank, b.rank);
  for (uint32_t i = skip_last; i < out.rank; ++i) {
    const double x = i < a.rank ? a.d[a.rank - 1 - i] : 1;
    const double y = i < b.rank ? b.d[b.rank - 1 - i] : 1;
    out.d[out.rank - 1 - i] = std::max(x, y);
  }
  return out;
}

NodeCost binary(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode2x1*>(node->xnode_union());
  const Dims a = declared(ctx, t->input1_id()), b = declared(ctx, t->input2_id());
  NodeCost c;
  c.output_id = t->output_id();
  if (node->xnode_union_type() != XNodeUnion::XNNBatchMatrixMultiply) {
    c.output = broadcast(a, b, 0).elements();
    return c;
  }
  if (a.rank < 2 || b.rank < 2) return {};
  // [..., M, K] x [..., K, N] (or [..., N, K] transposed) -> [..., M, N].
  Dims out = broadcast(a, b, 2);
  const bool transposed = (t->flags() & XNN_FLAG_TRANSPOSE_B) != 0;
  out.d[out.rank - 2] = a.last(1);
  out.d[out.rank - 1] = transposed ? b.last(1) : b.last(0);
  c.output = out.elements();
  c.multiply_adds = c.output * a.last(0);
  return c;
}

NodeCost fully_connected(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  const Dims x = declared(ctx, t->input1_id()), w = declared(ctx, t->filter_id());
  if (x.rank == 0 || w.rank != 2) return {};
  const bool transposed = (t->flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  NodeCost c;
  c.output_id = t->output_id();
  c.output = x.elements() / std::max(x.last(0), 1.0) * (transposed ? w.d[1] : w.d[0]);
  c.multiply_adds = c.output * x.last(0);
  return c;
}

NodeCost pad(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticConstantPad();
  Dims out = declared(ctx, t->input_id());
  for (uint32_t i = 0; i < out.rank; ++i) {
    if (t->pre_paddings() != nullptr && i < t->pre_paddings()->size()) {
      out.d[i] += t->pre_paddings()->Get(i);
    }
    if (t->post_paddings() != nullptr && i < t->post_paddings()->size()) {
      out.d[i] += t->post_paddings()->Get(i);
    }
  }
  NodeCost c;
  c.output_id = t->output_id();
  c.output = out.elements();
  return c;
}

NodeCost resize(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticResizeBilinear2D();
  const Dims x = declared(ctx, t->input_id());
  if (x.rank != 4) return {};
  NodeCost c;
  c.output_id = t->output_id();
  c.output = x.d[0] * t->new_height() * t->new_width() * x.d[3];
  return c;
}

NodeCost concatenate(const DefinitionContext& ctx, const fb_xnnpack::XNode* node, int inputs) {
  const auto* t = static_cast<const fb_xnnpack::_XNNCat*>(node->xnode_union());
  const uint32_t ids[5] = {t->input1_id(), t->input2_id(), t->input3_id(), t->input4_id(),
                           t->input5_id()};
  Dims out = declared(ctx, ids[0]);
  if (t->axis() >= out.rank) return {};
  for (int i = 1; i < inputs; ++i) {
    const Dims x = declared(ctx, ids[i]);
    for (uint32_t d = 0; d < std::min(out.rank, x.rank); ++d) {
      out.d[d] = d == t->axis() ? out.d[d] + x.d[d] : std::max(out.d[d], x.d[d]);
    }
  }
  NodeCost c;
  c.output_id = t->output_id();
  c.output = out.elements();
  return c;
}

NodeCost attention(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNScaledDotProductAttention();
  const Dims q = declared(ctx, t->query_id()), k = declared(ctx, t->key_id());
  const Dims v = declared(ctx, t->value_id());
  if (q.rank < 2 || k.rank < 2 || v.rank < 2) return {};
  // Per query row (batch x heads x L of them): S scores, then S x Dv sums.
  const double rows = q.elements() / std::max(q.last(0), 1.0);
  NodeCost c;
  c.output_id = t->output_id();
  c.output = rows * v.last(0);
  c.multiply_adds = rows * k.last(1) * (q.last(0) + v.last(0));
  c.buffer_bytes = rows * k.last(1) * sizeof(float);
  return c;
}

NodeCost cost_of(const DefinitionContext& ctx, const fb_xnnpack::XNode* node) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNConv2d:
    case XNodeUnion::XNNDepthwiseConv2d:
    case XNodeUnion::XNNConvTranspose2d: return convolution(ctx, node);
    case XNodeUnion::XNNAvgPooling2d:
    case XNodeUnion::XNNMaxPooling2d:
    case XNodeUnion::XNNArgMaxPooling2d: return pooling(ctx, node);
    case XNodeUnion::XNNAdd:
    case XNodeUnion::XNNSubtract:
    case XNodeUnion::XNNMultiply:
    case XNodeUnion::XNNDiv:
    case XNodeUnion::XNNMinimum:
    case XNodeUnion::XNNMaximum:
    case XNodeUnion::XNNPReLU:
    case XNodeUnion::XNNBatchMatrixMultiply: return binary(ctx, node);
    case XNodeUnion::XNNFullyConnected: return fully_connected(ctx, node);
    case XNodeUnion::XNNStaticConstantPad: return pad(ctx, node);
    case XNodeUnion::XNNStaticResizeBilinear2D: return resize(ctx, node);
    case XNodeUnion::XNNConcatenate2: return concatenate(ctx, node, 2);
    case XNodeUnion::XNNConcatenate3: return concatenate(ctx, node, 3);
    case XNodeUnion::XNNConcatenate4: return concatenate(ctx, node, 4);
    case XNodeUnion::XNNConcatenate5: return concatenate(ctx, node, 5);
    case XNodeUnion::XNNScaledDotProductAttention: return attention(ctx, node);
    default: return {};  // Outputs no larger than an input.
  }
}

}  // namespace

Status check_node_bounds(const DefinitionContext& ctx) {
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  double multiply_adds = 0;
  double buffer_bytes = 0;
  for (uint32_t i = 0; i < num_nodes; ++i) {
    const NodeCost c = cost_of(ctx, nodes->Get(i));
    if (c.output >= 0) {
      const double declared_output = declared(ctx, c.output_id).elements();
      TL_CHECK_OR_RETURN(c.output <= declared_output, Error::kInvalidProgram,
                         "XNNPACK node %u: its inputs' declared shapes give an output of %.0f "
                         "elements, but its output value %u declares %.0f",
                         i, c.output, c.output_id, declared_output);
    }
    multiply_adds += c.multiply_adds;
    buffer_bytes += c.buffer_bytes;
    TL_CHECK_OR_RETURN(buffer_bytes <= static_cast<double>(ctx.max_value_bytes),
                       Error::kInvalidProgram,
                       "XNNPACK nodes 0..%u need %.0f bytes of indirection and attention "
                       "buffers at the declared shapes; the limit is %llu",
                       i, buffer_bytes, static_cast<unsigned long long>(ctx.max_value_bytes));
    TL_CHECK_OR_RETURN(multiply_adds <= static_cast<double>(ctx.max_multiply_adds),
                       Error::kInvalidProgram,
                       "XNNPACK nodes 0..%u do %.4g multiply-adds per execute at the declared "
                       "shapes; the limit is %.4g",
                       i, multiply_adds, static_cast<double>(ctx.max_multiply_adds));
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
