#include "backends/xnnpack/node_bounds.h"

#include <memory>
#include <new>

#include "backends/xnnpack/shape_inference.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNodeUnion;

// What one node asks XNNPACK (or our stages) for at the inferred shapes.
struct NodeCost {
  double multiply_adds = 0;
  double buffer_bytes = 0;  // XNNPACK's indirection pointers or attention scores.
};

double last(const InferredShape& s, uint32_t from_end) {
  return s.rank > from_end ? static_cast<double>(s.dims[s.rank - 1 - from_end]) : 1;
}

// The elements of all dims but the last (rows of a matrix, pixels of an image).
double leading(const InferredShape& s) {
  double n = 1;
  for (uint32_t d = 0; d + 1 < s.rank; ++d) n *= static_cast<double>(s.dims[d]);
  return n;
}

// XNNPACK keeps a pointer per kernel tap per output pixel of one image
// ([N, H, W, C] output) unless the window is a plain 1x1.
double indirection_bytes(const InferredShape& out, double taps) {
  return last(out, 2) * last(out, 1) * taps * sizeof(void*);
}

NodeCost convolution(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  const InferredShape& x = shapes[t->input1_id()];
  const InferredShape& y = shapes[t->output_id()];
  const double taps = static_cast<double>(t->kernel_height()) * t->kernel_width();
  const double gic = t->group_input_channels();
  NodeCost c;
  c.buffer_bytes = indirection_bytes(y, taps);
  if (node->xnode_union_type() == XNodeUnion::XNNConvTranspose2d) {
    // Each input pixel scatters a kernel-sized patch.
    c.multiply_adds = leading(x) * t->groups() * gic * t->group_output_channels() * taps;
    return c;
  }
  const bool depthwise = node->xnode_union_type() == XNodeUnion::XNNDepthwiseConv2d;
  c.multiply_adds = y.elements() * (depthwise ? taps : gic * taps);
  const bool pointwise = taps == 1 && t->padding_top() == 0 && t->padding_bottom() == 0 &&
                         t->padding_left() == 0 && t->padding_right() == 0 &&
                         t->subsampling_height() == 1 && t->subsampling_width() == 1;
  if (pointwise) c.buffer_bytes = 0;
  return c;
}

NodeCost pooling(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  uint32_t output = 0;
  double taps = 1;
  if (node->xnode_union_type() == XNodeUnion::XNNArgMaxPooling2d) {
    const auto* t = node->xnode_union_as_XNNArgMaxPooling2d();
    output = t->output_value_id();
    taps = static_cast<double>(t->pooling_height()) * t->pooling_width();
  } else {
    const auto* t = static_cast<const fb_xnnpack::_XNNPooling2D*>(node->xnode_union());
    output = t->output_id();
    taps = static_cast<double>(t->pooling_height()) * t->pooling_width();
  }
  NodeCost c;
  c.multiply_adds = shapes[output].elements() * taps;
  c.buffer_bytes = indirection_bytes(shapes[output], taps);
  return c;
}

NodeCost batch_matmul(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNBatchMatrixMultiply();
  NodeCost c;
  c.multiply_adds = shapes[t->output_id()].elements() * last(shapes[t->input1_id()], 0);
  return c;
}

NodeCost fully_connected(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  const InferredShape& w = shapes[t->filter_id()];
  const bool transposed = (t->flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  NodeCost c;
  c.multiply_adds = shapes[t->output_id()].elements() * (transposed ? last(w, 1) : last(w, 0));
  return c;
}

NodeCost attention(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  const auto* t = node->xnode_union_as_XNNScaledDotProductAttention();
  const InferredShape& q = shapes[t->query_id()];
  // Per query row (batch x heads x T of them): U scores, then U x D sums.
  const double rows = leading(q);
  const double keys = last(shapes[t->key_id()], 1);
  NodeCost c;
  c.multiply_adds = rows * keys * (last(q, 0) + last(shapes[t->value_id()], 0));
  c.buffer_bytes = rows * keys * sizeof(float);
  return c;
}

NodeCost cost_of(const InferredShape* shapes, const fb_xnnpack::XNode* node) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNConv2d:
    case XNodeUnion::XNNDepthwiseConv2d:
    case XNodeUnion::XNNConvTranspose2d: return convolution(shapes, node);
    case XNodeUnion::XNNAvgPooling2d:
    case XNodeUnion::XNNMaxPooling2d:
    case XNodeUnion::XNNArgMaxPooling2d: return pooling(shapes, node);
    case XNodeUnion::XNNBatchMatrixMultiply: return batch_matmul(shapes, node);
    case XNodeUnion::XNNFullyConnected: return fully_connected(shapes, node);
    case XNodeUnion::XNNScaledDotProductAttention: return attention(shapes, node);
    default: return {};  // Linear in their elements: the value budget covers them.
  }
}

}  // namespace

Status check_node_bounds(const DefinitionContext& ctx) {
  std::unique_ptr<InferredShape[]> shapes(new (std::nothrow) InferredShape[ctx.num_values + 1]);
  TL_CHECK_OR_RETURN(shapes != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory inferring the shapes of %u XNNPACK values", ctx.num_values);
  TL_RETURN_IF_ERROR(infer_shapes(ctx, shapes.get()));
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  double multiply_adds = 0;
  double buffer_bytes = 0;
  for (uint32_t i = 0; i < num_nodes; ++i) {
    const NodeCost c = cost_of(shapes.get(), nodes->Get(i));
    multiply_adds += c.multiply_adds;
    buffer_bytes += c.buffer_bytes;
    TL_CHECK_OR_RETURN(buffer_bytes <= static_cast<double>(ctx.max_value_bytes),
                       Error::kInvalidProgram,
                       "XNNPACK nodes 0..%u need %.0f bytes of indirection and attention "
                       "buffers at the inferred shapes; the limit is %llu",
                       i, buffer_bytes, static_cast<unsigned long long>(ctx.max_value_bytes));
    TL_CHECK_OR_RETURN(multiply_adds <= static_cast<double>(ctx.max_multiply_adds),
                       Error::kInvalidProgram,
                       "XNNPACK nodes 0..%u do %.4g multiply-adds per execute at the inferred "
                       "shapes; the limit is %.4g",
                       i, multiply_adds, static_cast<double>(ctx.max_multiply_adds));
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
