#include "backends/xnnpack/shape_inference.h"

#include <cstdio>
#include <limits>

#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {

double InferredShape::elements() const {
  double n = 1;
  for (uint32_t d = 0; d < rank; ++d) n *= static_cast<double>(dims[d]);
  return n;
}

namespace {

using fb_xnnpack::XNode;
using fb_xnnpack::XNodeUnion;
using Shape = InferredShape;

constexpr uint8_t kAllDims = (1u << XNN_MAX_TENSOR_DIMS) - 1;
constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint8_t bit(uint32_t d) { return static_cast<uint8_t>(1u << d); }

// Saturates instead of wrapping: payload parameters (reshape targets) can
// multiply past 64 bits, and a saturated product never matches a real one.
uint64_t multiply(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}

uint64_t product(const uint64_t* dims, uint32_t rank) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < rank; ++d) n = multiply(n, dims[d]);
  return n;
}

// "[1,8,8,3]" (cut at `size`).
struct DimsText {
  char text[136];
  DimsText(const uint64_t* dims, uint32_t rank) {
    int n = std::snprintf(text, sizeof(text), "[");
    for (uint32_t d = 0; d < rank && n > 0 && n < static_cast<int>(sizeof(text)); ++d) {
      n += std::snprintf(text + n, sizeof(text) - static_cast<size_t>(n), "%s%llu",
                         d ? "," : "", static_cast<unsigned long long>(dims[d]));
    }
    if (n > 0 && n < static_cast<int>(sizeof(text))) {
      std::snprintf(text + n, sizeof(text) - static_cast<size_t>(n), "]");
    }
  }
};

DimsText text_of(const Shape& s) { return DimsText(s.dims, s.rank); }

// The inferred shapes as one node reads and writes them.
class NodeShapes {
 public:
  NodeShapes(const DefinitionContext& ctx, InferredShape* shapes) : ctx_(ctx), shapes_(shapes) {}

  // A value the node reads; it must be known by now (list order is the
  // order XNNPACK runs the nodes in).
  Result<Shape> in(uint32_t id, const char* role) const {
    TL_CHECK_OR_RETURN(id < ctx_.num_values, Error::kInvalidProgram, "%s value id %u is out of range",
                       role, id);
    TL_CHECK_OR_RETURN(shapes_[id].known, Error::kInvalidProgram,
                       "its %s, value %u, is not written by any earlier node", role, id);
    return shapes_[id];
  }

  // Holds `s` against the output's declared dims, then records it.
  Status out(uint32_t id, const Shape& s) {
    TL_CHECK_OR_RETURN(id < ctx_.num_values, Error::kInvalidProgram,
                       "output value id %u is out of range", id);
    const DeclaredShape& declared = ctx_.shapes[id];
    bool fits = s.rank == declared.rank;
    for (uint32_t d = 0; fits && d < s.rank; ++d) {
      const uint64_t bound = declared.dims[d];
      fits = (s.follows_input & bit(d)) != 0 ? s.dims[d] <= bound : s.dims[d] == bound;
    }
    if (!fits) {
      uint64_t dims[XNN_MAX_TENSOR_DIMS] = {};
      for (uint32_t d = 0; d < declared.rank && d < XNN_MAX_TENSOR_DIMS; ++d) {
        dims[d] = declared.dims[d];
      }
      return Status::error(Error::kInvalidProgram,
                           "XNNPACK gives its output value %u the shape %s at the declared input "
                           "shapes, but the value declares %s",
                           id, text_of(s).text, DimsText(dims, declared.rank).text);
    }
    shapes_[id] = s;
    shapes_[id].known = true;
    return Error::kOk;
  }

 private:
  const DefinitionContext& ctx_;
  InferredShape* shapes_;
};

Status mismatch(const char* what, const Shape& a, const Shape& b) {
  return Status::error(Error::kInvalidProgram, "%s: %s and %s", what, text_of(a).text,
                       text_of(b).text);
}

// --- element-wise, copy, convert, softmax: the input's shape --------------

Status same_shape(NodeShapes& io, const XNode* node) {
  uint32_t input = 0, output = 0;
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNLeakyReLU:
      input = node->xnode_union_as_XNNLeakyReLU()->input_id();
      output = node->xnode_union_as_XNNLeakyReLU()->output_id();
      break;
    case XNodeUnion::XNNELU:
      input = node->xnode_union_as_XNNELU()->input_id();
      output = node->xnode_union_as_XNNELU()->output_id();
      break;
    default: {
      const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(node->xnode_union());
      input = t->input_id(), output = t->output_id();
    }
  }
  TL_ASSIGN_OR_RETURN(Shape x, io.in(input, "input"));
  return io.out(output, x);
}

// Numpy broadcasting, right-aligned, of a's and b's dims before their last
// `skip` (the matrix dims of a batch matmul); dims must be equal or 1.
Result<Shape> broadcast(const Shape& a, const Shape& b, uint32_t skip) {
  Shape out;
  out.rank = a.rank > b.rank ? a.rank : b.rank;
  for (uint32_t i = skip; i < out.rank; ++i) {
    const bool in_a = i < a.rank, in_b = i < b.rank;
    const uint32_t da = a.rank - 1 - i, db = b.rank - 1 - i, d = out.rank - 1 - i;
    const uint64_t x = in_a ? a.dims[da] : 1, y = in_b ? b.dims[db] : 1;
    if (x != y && x != 1 && y != 1) return mismatch("its inputs do not broadcast", a, b);
    out.dims[d] = x == 1 ? y : x;
    const bool varies = (in_a && (a.follows_input & bit(da))) || (in_b && (b.follows_input & bit(db)));
    if (varies) out.follows_input |= bit(d);
  }
  return out;
}

Status binary(NodeShapes& io, const XNode* node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode2x1*>(node->xnode_union());
  TL_ASSIGN_OR_RETURN(Shape a, io.in(t->input1_id(), "input 1"));
  TL_ASSIGN_OR_RETURN(Shape b, io.in(t->input2_id(), "input 2"));
  TL_ASSIGN_OR_RETURN(Shape out, broadcast(a, b, 0));
  return io.out(t->output_id(), out);
}

// [..., M, K] x [..., K, N] (XNN_FLAG_TRANSPOSE_B: [..., N, K]) -> [..., M, N],
// the batch dims broadcast.
Status batch_matmul(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNBatchMatrixMultiply();
  TL_CHECK_OR_RETURN((t->flags() & XNN_FLAG_TRANSPOSE_A) == 0, Error::kInvalidProgram,
                     "flag XNN_FLAG_TRANSPOSE_A (0x%x) is not supported", XNN_FLAG_TRANSPOSE_A);
  TL_ASSIGN_OR_RETURN(Shape a, io.in(t->input1_id(), "input 1"));
  TL_ASSIGN_OR_RETURN(Shape b, io.in(t->input2_id(), "input 2"));
  TL_CHECK_OR_RETURN(a.rank >= 2 && b.rank >= 2, Error::kInvalidProgram,
                     "batch matrix multiply needs inputs of 2 or more dims, not %u and %u", a.rank,
                     b.rank);
  const bool transposed = (t->flags() & XNN_FLAG_TRANSPOSE_B) != 0;
  const uint32_t b_k = transposed ? b.rank - 1 : b.rank - 2;
  const uint32_t b_n = transposed ? b.rank - 2 : b.rank - 1;
  if (a.dims[a.rank - 1] != b.dims[b_k]) return mismatch("its inputs' inner dims differ", a, b);
  TL_ASSIGN_OR_RETURN(Shape out, broadcast(a, b, 2));
  out.dims[out.rank - 2] = a.dims[a.rank - 2];
  out.dims[out.rank - 1] = b.dims[b_n];
  out.follows_input &= static_cast<uint8_t>(~(bit(out.rank - 2) | bit(out.rank - 1)));
  if (a.follows_input & bit(a.rank - 2)) out.follows_input |= bit(out.rank - 2);
  if (b.follows_input & bit(b_n)) out.follows_input |= bit(out.rank - 1);
  return io.out(t->output_id(), out);
}

// --- weighted nodes ------------------------------------------------------

// Weights XNNPACK packs at create: their inferred dims are what the node
// checks (nodes_linear.cpp) saw, declared.
Result<Shape> weights(NodeShapes& io, uint32_t id, const char* role,
                      const DefinitionContext& ctx) {
  TL_ASSIGN_OR_RETURN(Shape w, io.in(id, role));
  bool same = w.rank == ctx.shapes[id].rank;
  for (uint32_t d = 0; same && d < w.rank; ++d) same = w.dims[d] == ctx.shapes[id].dims[d];
  TL_CHECK_OR_RETURN(same, Error::kInvalidProgram,
                     "its %s, value %u, has the shape %s, not its declared dims", role, id,
                     text_of(w).text);
  return w;
}

// x [..., K] -> [..., N] with filter [N, K] (XNN_FLAG_TRANSPOSE_WEIGHTS:
// [K, N]); XNN_FLAG_TENSORFLOW_RESHAPE_2D flattens x to [elements / K, K].
// XNNPACK takes K from the filter and reads elements / K rows of x, so x's
// last dim must be K.
Status fully_connected(NodeShapes& io, const XNode* node, const DefinitionContext& ctx) {
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  TL_ASSIGN_OR_RETURN(Shape x, io.in(t->input1_id(), "input"));
  TL_ASSIGN_OR_RETURN(Shape w, weights(io, t->filter_id(), "filter", ctx));
  TL_CHECK_OR_RETURN(w.rank == 2 && x.rank >= 1, Error::kInvalidProgram,
                     "fully-connected filter must be 2-d and input at least 1-d (got %u and %u "
                     "dims)",
                     w.rank, x.rank);
  const bool transposed = (t->flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const uint64_t k = transposed ? w.dims[0] : w.dims[1], n = transposed ? w.dims[1] : w.dims[0];
  Shape out = x;
  if ((t->flags() & XNN_FLAG_TENSORFLOW_RESHAPE_2D) != 0) {
    const uint64_t elements = product(x.dims, x.rank);
    TL_CHECK_OR_RETURN(k != 0 && elements % k == 0, Error::kInvalidProgram,
                       "input %s does not flatten into rows of %llu features", text_of(x).text,
                       static_cast<unsigned long long>(k));
    out.rank = 2;
    out.dims[0] = elements / k;
    out.follows_input = x.follows_input != 0 ? bit(0) : 0;
  } else {
    TL_CHECK_OR_RETURN(x.dims[x.rank - 1] == k, Error::kInvalidProgram,
                       "input %s has %llu features, the filter %s expects %llu", text_of(x).text,
                       static_cast<unsigned long long>(x.dims[x.rank - 1]), text_of(w).text,
                       static_cast<unsigned long long>(k));
  }
  if (t->bias_id() != XNN_INVALID_VALUE_ID) {
    TL_ASSIGN_OR_RETURN(Shape bias, weights(io, t->bias_id(), "bias", ctx));
    TL_CHECK_OR_RETURN(bias.rank == 1 && bias.dims[0] == n, Error::kInvalidProgram,
                       "bias %s does not match %llu output channels", text_of(bias).text,
                       static_cast<unsigned long long>(n));
  }
  out.dims[out.rank - 1] = n;
  out.follows_input &= static_cast<uint8_t>(~bit(out.rank - 1));
  return io.out(t->output_id(), out);
}

// Output size along one window dim, as XNNPACK computes it: with
// XNN_FLAG_TENSORFLOW_SAME_PADDING ceil(in / stride), otherwise
// (in + padding - dilated kernel, 0 if negative) / stride + 1.
uint64_t window_output(uint64_t in, uint64_t padding, uint64_t kernel, uint64_t stride,
                       uint64_t dilation, bool same_padding) {
  if (same_padding) return (in + stride - 1) / stride;
  const uint64_t padded = in + padding, span = (kernel - 1) * dilation + 1;
  return (padded > span ? padded - span : 0) / stride + 1;
}

// With XNN_FLAG_TENSORFLOW_SAME_PADDING XNNPACK pads each dim by
// (out - 1) * stride + dilated kernel - in, in unsigned arithmetic: a stride
// beyond the window can make that negative, and the wrapped padding then
// sized a 3.7 GB buffer for a 7x8 input (avg pooling 3x3, stride 253).
Status same_padding_is_positive(uint64_t in, uint64_t kernel, uint64_t stride, uint64_t dilation,
                                const char* dim) {
  const uint64_t out = (in + stride - 1) / stride, span = (kernel - 1) * dilation + 1;
  TL_CHECK_OR_RETURN((out == 0 ? 0 : (out - 1) * stride) + span >= in, Error::kInvalidProgram,
                     "with XNN_FLAG_TENSORFLOW_SAME_PADDING its window of %llu and stride %llu "
                     "leave %llu input %s unread, which XNNPACK pads by a negative amount",
                     static_cast<unsigned long long>(span), static_cast<unsigned long long>(stride),
                     static_cast<unsigned long long>(in - (out - 1) * stride - span), dim);
  return Error::kOk;
}

// Without it, the dilated window must fit the padded input: XNNPACK's
// indirection buffer has no pointer for a tap beyond both, and its GEMM
// asserted on the null row (session 21: a window of 5 over a 2x2 input).
// PyTorch refuses such a window too.
Status window_fits(uint64_t in, uint64_t padding, uint64_t kernel, uint64_t dilation,
                   const char* dim) {
  const uint64_t span = (kernel - 1) * dilation + 1;
  TL_CHECK_OR_RETURN(in + padding >= span, Error::kInvalidProgram,
                     "its window of %llu %s is larger than the input's %llu with padding %llu",
                     static_cast<unsigned long long>(span), dim,
                     static_cast<unsigned long long>(in), static_cast<unsigned long long>(padding));
  return Error::kOk;
}

// NHWC input [N, H, W, C] of a windowed node, its channels checked.
Result<Shape> nhwc_input(NodeShapes& io, uint32_t id, uint64_t channels) {
  TL_ASSIGN_OR_RETURN(Shape x, io.in(id, "input"));
  TL_CHECK_OR_RETURN(x.rank == 4, Error::kInvalidProgram, "input %s is not 4-d (NHWC)",
                     text_of(x).text);
  TL_CHECK_OR_RETURN(channels == 0 || x.dims[3] == channels, Error::kInvalidProgram,
                     "input %s has %llu channels; the node's parameters take %llu",
                     text_of(x).text, static_cast<unsigned long long>(x.dims[3]),
                     static_cast<unsigned long long>(channels));
  return x;
}

// [N, oh, ow, channels]: N, H and W follow the input as it does.
Shape nhwc_output(const Shape& x, uint64_t oh, uint64_t ow, uint64_t channels, bool keep_c_bit) {
  Shape out = x;
  out.dims[1] = oh, out.dims[2] = ow, out.dims[3] = channels;
  if (!keep_c_bit) out.follows_input &= static_cast<uint8_t>(~bit(3));
  return out;
}

Status convolution(NodeShapes& io, const XNode* node, const DefinitionContext& ctx) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  const XNodeUnion kind = node->xnode_union_type();
  const uint64_t groups = t->groups(), gic = t->group_input_channels();
  const uint64_t goc = t->group_output_channels();
  const bool depthwise = kind == XNodeUnion::XNNDepthwiseConv2d;
  const bool same = (t->flags() & XNN_FLAG_TENSORFLOW_SAME_PADDING) != 0;
  TL_CHECK_OR_RETURN(
      t->subsampling_height() != 0 && t->subsampling_width() != 0 && (!depthwise || gic != 0),
      Error::kInvalidProgram, "a stride or the input channels per group are 0");
  // Depthwise: `groups` input channels, goc / gic outputs each.
  const uint64_t in_channels = depthwise ? groups : groups * gic;
  const uint64_t out_channels = depthwise ? groups * (goc / gic) : groups * goc;
  TL_ASSIGN_OR_RETURN(Shape x, nhwc_input(io, t->input1_id(), in_channels));
  TL_RETURN_IF_ERROR(weights(io, t->filter_id(), "filter", ctx).status());
  if (t->bias_id() != XNN_INVALID_VALUE_ID) {
    TL_RETURN_IF_ERROR(weights(io, t->bias_id(), "bias", ctx).status());
  }
  const uint64_t pad_h = uint64_t{t->padding_top()} + t->padding_bottom();
  const uint64_t pad_w = uint64_t{t->padding_left()} + t->padding_right();
  uint64_t oh = 0, ow = 0;
  if (kind == XNodeUnion::XNNConvTranspose2d) {
    TL_CHECK_OR_RETURN(!same, Error::kInvalidProgram,
                       "flag XNN_FLAG_TENSORFLOW_SAME_PADDING on a transposed convolution is not "
                       "supported");
    // stride * (in - 1) + adjustment + dilated kernel - padding (0 if
    // negative), in size_t as XNNPACK computes it.
    auto up = [](uint64_t in, uint64_t stride, uint64_t adjustment, uint64_t kernel,
                 uint64_t dilation, uint64_t padding) {
      const uint64_t full = stride * (in - 1) + adjustment + (kernel - 1) * dilation + 1;
      return full > padding ? full - padding : 0;
    };
    oh = up(x.dims[1], t->subsampling_height(), t->adjustment_height(), t->kernel_height(),
            t->dilation_height(), pad_h);
    ow = up(x.dims[2], t->subsampling_width(), t->adjustment_width(), t->kernel_width(),
            t->dilation_width(), pad_w);
    // XNNPACK divides by the output's size when it sets the node up
    // (SIGFPE in session 21's oracle probe: a 2x2 input, 3x3, padding 2).
    TL_CHECK_OR_RETURN(oh != 0 && ow != 0, Error::kInvalidProgram,
                       "its padding (%llu rows, %llu columns) removes the whole output of the "
                       "input %s",
                       static_cast<unsigned long long>(pad_h),
                       static_cast<unsigned long long>(pad_w), text_of(x).text);
  } else if (same) {
    TL_RETURN_IF_ERROR(same_padding_is_positive(x.dims[1], t->kernel_height(),
                                                t->subsampling_height(), t->dilation_height(),
                                                "rows"));
    TL_RETURN_IF_ERROR(same_padding_is_positive(x.dims[2], t->kernel_width(),
                                                t->subsampling_width(), t->dilation_width(),
                                                "columns"));
  } else {
    TL_RETURN_IF_ERROR(
        window_fits(x.dims[1], pad_h, t->kernel_height(), t->dilation_height(), "rows"));
    TL_RETURN_IF_ERROR(
        window_fits(x.dims[2], pad_w, t->kernel_width(), t->dilation_width(), "columns"));
  }
  if (kind != XNodeUnion::XNNConvTranspose2d) {
    oh = window_output(x.dims[1], pad_h, t->kernel_height(), t->subsampling_height(),
                       t->dilation_height(), same);
    ow = window_output(x.dims[2], pad_w, t->kernel_width(), t->subsampling_width(),
                       t->dilation_width(), same);
  }
  return io.out(t->output_id(), nhwc_output(x, oh, ow, out_channels, false));
}

Status pooling(NodeShapes& io, const XNode* node) {
  uint32_t input = 0, pool_h = 1, pool_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  uint64_t pad_h = 0, pad_w = 0;
  uint32_t flags = 0;
  if (node->xnode_union_type() == XNodeUnion::XNNArgMaxPooling2d) {
    const auto* t = node->xnode_union_as_XNNArgMaxPooling2d();
    input = t->input_id(), flags = t->flags();
    pool_h = stride_h = t->pooling_height(), pool_w = stride_w = t->pooling_width();
    pad_h = uint64_t{t->padding_top()} + t->padding_bottom();
    pad_w = uint64_t{t->padding_left()} + t->padding_right();
  } else {
    const auto* t = static_cast<const fb_xnnpack::_XNNPooling2D*>(node->xnode_union());
    input = t->input_id(), flags = t->flags();
    pool_h = t->pooling_height(), pool_w = t->pooling_width();
    stride_h = t->stride_height(), stride_w = t->stride_width();
    if (node->xnode_union_type() == XNodeUnion::XNNMaxPooling2d) {
      dil_h = t->dilation_height(), dil_w = t->dilation_width();  // Average pooling has none.
    }
    pad_h = uint64_t{t->padding_top()} + t->padding_bottom();
    pad_w = uint64_t{t->padding_left()} + t->padding_right();
  }
  TL_CHECK_OR_RETURN(stride_h != 0 && stride_w != 0, Error::kInvalidProgram,
                     "a pooling stride is 0");
  TL_ASSIGN_OR_RETURN(Shape x, nhwc_input(io, input, 0));
  const bool same = (flags & XNN_FLAG_TENSORFLOW_SAME_PADDING) != 0;
  if (same) {
    TL_RETURN_IF_ERROR(same_padding_is_positive(x.dims[1], pool_h, stride_h, dil_h, "rows"));
    TL_RETURN_IF_ERROR(same_padding_is_positive(x.dims[2], pool_w, stride_w, dil_w, "columns"));
  } else {
    TL_RETURN_IF_ERROR(window_fits(x.dims[1], pad_h, pool_h, dil_h, "rows"));
    TL_RETURN_IF_ERROR(window_fits(x.dims[2], pad_w, pool_w, dil_w, "columns"));
  }
  const Shape out = nhwc_output(x, window_output(x.dims[1], pad_h, pool_h, stride_h, dil_h, same),
                                window_output(x.dims[2], pad_w, pool_w, stride_w, dil_w, same),
                                x.dims[3], true);
  if (node->xnode_union_type() == XNodeUnion::XNNArgMaxPooling2d) {
    const auto* t = node->xnode_union_as_XNNArgMaxPooling2d();
    TL_RETURN_IF_ERROR(io.out(t->output_value_id(), out));
    return io.out(t->output_index_id(), out);
  }
  return io.out(static_cast<const fb_xnnpack::_XNNPooling2D*>(node->xnode_union())->output_id(),
                out);
}

// A mean over the two dims before the last ([N, H, W, C] -> [N, 1, 1, C]);
// without XNN_FLAG_KEEP_DIMS those dims are dropped.
Status global_average_pooling(NodeShapes& io, const XNode* node) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(node->xnode_union());
  TL_ASSIGN_OR_RETURN(Shape x, io.in(t->input_id(), "input"));
  TL_CHECK_OR_RETURN(x.rank >= 3, Error::kInvalidProgram,
                     "global average pooling needs an input of 3 or more dims, not %s",
                     text_of(x).text);
  Shape out = x;
  const uint32_t h = x.rank - 3, w = x.rank - 2;
  if ((t->flags() & XNN_FLAG_KEEP_DIMS) != 0) {
    out.dims[h] = out.dims[w] = 1;
    out.follows_input &= static_cast<uint8_t>(~(bit(h) | bit(w)));
  } else {
    out.rank = x.rank - 2;
    out.dims[h] = x.dims[x.rank - 1];
    out.follows_input = static_cast<uint8_t>(
        (x.follows_input & (bit(h) - 1)) | ((x.follows_input & bit(x.rank - 1)) ? bit(h) : 0));
  }
  return io.out(t->output_id(), out);
}


// --- data movement ---------------------------------------------------------

// new_shape's entries, one per output dim; a single 0 is inferred from the
// input's element count. XNNPACK copies the input's elements, so the counts
// must agree.
Status reshape(NodeShapes& io, const XNode* node, const DefinitionContext& ctx) {
  const auto* t = node->xnode_union_as_XNNStaticReshape();
  TL_ASSIGN_OR_RETURN(Shape x, io.in(t->input_id(), "input"));
  const auto* target = t->new_shape();
  const uint32_t n = target == nullptr ? 0 : target->size();
  const uint32_t declared_rank = t->output_id() < ctx.num_values ? ctx.shapes[t->output_id()].rank : 0;
  TL_CHECK_OR_RETURN(n >= 1 && n <= XNN_MAX_TENSOR_DIMS && n == declared_rank,
                     Error::kInvalidProgram,
                     "new_shape has %u entries; its output value %u declares %u dims", n,
                     t->output_id(), declared_rank);
  Shape out;
  out.rank = n;
  uint32_t inferred = n;
  uint64_t fixed = 1;
  for (uint32_t d = 0; d < n; ++d) {
    const uint32_t v = target->Get(d);
    if (v == 0) {
      TL_CHECK_OR_RETURN(inferred == n, Error::kInvalidProgram,
                         "new_shape has more than one 0 (inferred) entry");
      inferred = d;
    }
    out.dims[d] = v;
    fixed = multiply(fixed, v == 0 ? 1 : v);
  }
  const uint64_t elements = product(x.dims, x.rank);
  if (inferred < n) {
    TL_CHECK_OR_RETURN(elements % fixed == 0, Error::kInvalidProgram,
                       "the input %s does not divide into new_shape's fixed dims (%llu elements)",
                       text_of(x).text, static_cast<unsigned long long>(fixed));
    out.dims[inferred] = elements / fixed;
    if (x.follows_input != 0) out.follows_input = bit(inferred);
  } else {
    TL_CHECK_OR_RETURN(fixed == elements, Error::kInvalidProgram,
                       "new_shape %s holds %llu elements, the input %s %llu", text_of(out).text,
                       static_cast<unsigned long long>(fixed), text_of(x).text,
                       static_cast<unsigned long long>(elements));
  }
  return io.out(t->output_id(), out);
}

Status transpose(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticTranspose();
  TL_ASSIGN_OR_RETURN(Shape x, io.in(t->input_id(), "input"));
  const uint32_t n = t->perm() == nullptr ? 0 : t->perm()->size();
  TL_CHECK_OR_RETURN(n == x.rank, Error::kInvalidProgram,
                     "perm has %u entries for the input %s", n, text_of(x).text);
  Shape out;
  out.rank = n;
  uint8_t seen = 0;
  for (uint32_t d = 0; d < n; ++d) {
    const uint32_t from = t->perm()->Get(d);
    TL_CHECK_OR_RETURN(from < n && (seen & bit(from)) == 0, Error::kInvalidProgram,
                       "perm is not a permutation of 0..%u", n - 1);
    seen |= bit(from);
    out.dims[d] = x.dims[from];
    if (x.follows_input & bit(from)) out.follows_input |= bit(d);
  }
  return io.out(t->output_id(), out);
}

// The output is `sizes`; each [offset, offset + size) must lie in the input.
Status slice(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticSlice();
  TL_ASSIGN_OR_RETURN(Shape x, io.in(t->input_id(), "input"));
  const uint32_t n = t->sizes() == nullptr ? 0 : t->sizes()->size();
  const uint32_t offsets = t->offsets() == nullptr ? 0 : t->offsets()->size();
  TL_CHECK_OR_RETURN(n == x.rank && offsets == n, Error::kInvalidProgram,
                     "slice has %u offsets and %u sizes for the input %s", offsets, n,
                     text_of(x).text);
  Shape out;
  out.rank = n;
  for (uint32_t d = 0; d < n; ++d) {
    const uint64_t offset = t->offsets()->Get(d), size = t->sizes()->Get(d);
    // XNNPACK versions differ on what a size of 0 means; no exporter writes one.
    TL_CHECK_OR_RETURN(size != 0 && offset + size <= x.dims[d], Error::kInvalidProgram,
                       "slice of %llu from %llu in dim %u does not fit the input %s",
                       static_cast<unsigned long long>(size),
                       static_cast<unsigned long long>(offset), d, text_of(x).text);
    out.dims[d] = size;
  }
  return io.out(t->output_id(), out);
}

// Each dim grows by its pre and post padding (missing entries: 0).
Status pad(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticConstantPad();
  TL_ASSIGN_OR_RETURN(Shape out, io.in(t->input_id(), "input"));
  for (uint32_t d = 0; d < out.rank; ++d) {
    if (t->pre_paddings() != nullptr && d < t->pre_paddings()->size()) {
      out.dims[d] += t->pre_paddings()->Get(d);
    }
    if (t->post_paddings() != nullptr && d < t->post_paddings()->size()) {
      out.dims[d] += t->post_paddings()->Get(d);
    }
  }
  return io.out(t->output_id(), out);
}

Status resize(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNStaticResizeBilinear2D();
  TL_ASSIGN_OR_RETURN(Shape x, nhwc_input(io, t->input_id(), 0));
  Shape out = x;
  out.dims[1] = t->new_height(), out.dims[2] = t->new_width();
  out.follows_input &= static_cast<uint8_t>(~(bit(1) | bit(2)));
  return io.out(t->output_id(), out);
}

// The inputs agree in every dim but `axis`, where the output sums them.
Status concatenate(NodeShapes& io, const XNode* node, int inputs) {
  const auto* t = static_cast<const fb_xnnpack::_XNNCat*>(node->xnode_union());
  const uint32_t ids[5] = {t->input1_id(), t->input2_id(), t->input3_id(), t->input4_id(),
                           t->input5_id()};
  static const char* const kRoles[5] = {"input 1", "input 2", "input 3", "input 4", "input 5"};
  TL_ASSIGN_OR_RETURN(Shape out, io.in(ids[0], kRoles[0]));
  const uint32_t axis = t->axis();
  TL_CHECK_OR_RETURN(axis < out.rank, Error::kInvalidProgram,
                     "concatenation axis %u is out of range for the input %s", axis,
                     text_of(out).text);
  for (int i = 1; i < inputs; ++i) {
    TL_ASSIGN_OR_RETURN(Shape x, io.in(ids[i], kRoles[i]));
    bool same = x.rank == out.rank;
    for (uint32_t d = 0; same && d < x.rank; ++d) same = d == axis || x.dims[d] == out.dims[d];
    if (!same) return mismatch("its inputs differ beyond the concatenation axis", out, x);
    out.dims[axis] += x.dims[axis];
    out.follows_input |= x.follows_input;
  }
  return io.out(t->output_id(), out);
}

// query [*, H, T, C], key [*, H, U, C] or [*, U, C] (one head), value the
// same with D, scale [C], mask [T, U] -> [*, H, T, D].
Status attention(NodeShapes& io, const XNode* node) {
  const auto* t = node->xnode_union_as_XNNScaledDotProductAttention();
  TL_ASSIGN_OR_RETURN(Shape q, io.in(t->query_id(), "query"));
  TL_ASSIGN_OR_RETURN(Shape k, io.in(t->key_id(), "key"));
  TL_ASSIGN_OR_RETURN(Shape v, io.in(t->value_id(), "value"));
  TL_ASSIGN_OR_RETURN(Shape scale, io.in(t->scale_id(), "scale"));
  TL_ASSIGN_OR_RETURN(Shape mask, io.in(t->mask_id(), "mask"));
  TL_CHECK_OR_RETURN(q.rank >= 3 && (k.rank == q.rank || k.rank + 1 == q.rank) &&
                         v.rank == k.rank,
                     Error::kInvalidProgram,
                     "query, key and value have %u, %u and %u dims; expected [*, H, T, C] and "
                     "two of [*, H, U, *] or [*, U, *]",
                     q.rank, k.rank, v.rank);
  // Key and value lead with the query's first dims (batch, and heads if any).
  bool same = k.dims[k.rank - 1] == q.dims[q.rank - 1] && v.dims[v.rank - 2] == k.dims[k.rank - 2];
  for (uint32_t d = 0; same && d + 2 < k.rank; ++d) {
    same = k.dims[d] == q.dims[d] && v.dims[d] == q.dims[d];
  }
  if (!same) return mismatch("its query and key (or value) dims disagree", q, k);
  const uint64_t tokens = q.dims[q.rank - 2], channels = q.dims[q.rank - 1];
  TL_CHECK_OR_RETURN(scale.rank == 1 && scale.dims[0] == channels, Error::kInvalidProgram,
                     "scale %s is not [%llu]", text_of(scale).text,
                     static_cast<unsigned long long>(channels));
  TL_CHECK_OR_RETURN(mask.rank == 2 && mask.dims[0] == tokens &&
                         mask.dims[1] == k.dims[k.rank - 2],
                     Error::kInvalidProgram, "mask %s is not [T, U] of query %s and key %s",
                     text_of(mask).text, text_of(q).text, text_of(k).text);
  Shape out = q;
  out.dims[q.rank - 1] = v.dims[v.rank - 1];
  out.follows_input &= static_cast<uint8_t>(~bit(q.rank - 1));
  if (v.follows_input & bit(v.rank - 1)) out.follows_input |= bit(q.rank - 1);
  return io.out(t->output_id(), out);
}

Status infer_node(NodeShapes& io, const XNode* node, const DefinitionContext& ctx) {
  switch (node->xnode_union_type()) {
    case XNodeUnion::XNNAdd:
    case XNodeUnion::XNNSubtract:
    case XNodeUnion::XNNMultiply:
    case XNodeUnion::XNNDiv:
    case XNodeUnion::XNNMinimum:
    case XNodeUnion::XNNMaximum:
    case XNodeUnion::XNNPReLU: return binary(io, node);
    case XNodeUnion::XNNBatchMatrixMultiply: return batch_matmul(io, node);
    case XNodeUnion::XNNFullyConnected: return fully_connected(io, node, ctx);
    case XNodeUnion::XNNConv2d:
    case XNodeUnion::XNNDepthwiseConv2d:
    case XNodeUnion::XNNConvTranspose2d: return convolution(io, node, ctx);
    case XNodeUnion::XNNAvgPooling2d:
    case XNodeUnion::XNNMaxPooling2d:
    case XNodeUnion::XNNArgMaxPooling2d: return pooling(io, node);
    case XNodeUnion::XNNGlobalAvgPooling2d: return global_average_pooling(io, node);
    case XNodeUnion::XNNStaticReshape: return reshape(io, node, ctx);
    case XNodeUnion::XNNStaticTranspose: return transpose(io, node);
    case XNodeUnion::XNNStaticSlice: return slice(io, node);
    case XNodeUnion::XNNStaticConstantPad: return pad(io, node);
    case XNodeUnion::XNNStaticResizeBilinear2D: return resize(io, node);
    case XNodeUnion::XNNConcatenate2: return concatenate(io, node, 2);
    case XNodeUnion::XNNConcatenate3: return concatenate(io, node, 3);
    case XNodeUnion::XNNConcatenate4: return concatenate(io, node, 4);
    case XNodeUnion::XNNConcatenate5: return concatenate(io, node, 5);
    case XNodeUnion::XNNScaledDotProductAttention: return attention(io, node);
    case XNodeUnion::XNNSoftmax:
    case XNodeUnion::XNNSigmoid:
    case XNodeUnion::XNNClamp:
    case XNodeUnion::XNNFloor:
    case XNodeUnion::XNNConvert:
    case XNodeUnion::XNNSquareRoot:
    case XNodeUnion::XNNCeiling:
    case XNodeUnion::XNNHardswish:
    case XNodeUnion::XNNLeakyReLU:
    case XNodeUnion::XNNNegate:
    case XNodeUnion::XNNSquare:
    case XNodeUnion::XNNELU:
    case XNodeUnion::XNNAbs:
    case XNodeUnion::XNNReciprocalSquareRoot:
    case XNodeUnion::XNNLog:
    case XNodeUnion::XNNGelu:
    case XNodeUnion::XNNTanh:
    case XNodeUnion::XNNExp:
    case XNodeUnion::XNNSin:
    case XNodeUnion::XNNCos:
    case XNodeUnion::XNNCopy: return same_shape(io, node);
    default:
      return Status::error(Error::kInvalidProgram, "its kind has no shape rule");
  }
}

}  // namespace

Status infer_shapes(const DefinitionContext& ctx, InferredShape* shapes) {
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    shapes[v] = InferredShape();
    const ValueKind kind = ctx.kinds[v];
    if (kind != ValueKind::kExternalInput && kind != ValueKind::kConstant) continue;
    shapes[v].known = true;
    shapes[v].rank = ctx.shapes[v].rank;
    for (uint32_t d = 0; d < ctx.shapes[v].rank; ++d) shapes[v].dims[d] = ctx.shapes[v].dims[d];
    // The caller may pass any size up to the declared one; constants are fixed.
    shapes[v].follows_input = kind == ValueKind::kExternalInput ? kAllDims : 0;
  }
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  NodeShapes io(ctx, shapes);
  for (uint32_t i = 0; i < num_nodes; ++i) {
    const XNode* node = nodes->Get(i);
    Status status = infer_node(io, node, ctx);
    if (!status.ok()) {
      return status.with_context("XNNPACK node %u (%s)", i,
                                 fb_xnnpack::EnumNameXNodeUnion(node->xnode_union_type()));
    }
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
