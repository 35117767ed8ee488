#include "backends/xnnpack/node_definition.h"

#include <limits>
#include <memory>
#include <new>

#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {

OutputRange output_range(const fb_xnnpack::XNode* node) {
  const fb_xnnpack::OutputMinMax* range = node->output_min_max();
  if (range == nullptr) {
    return {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  }
  return {range->output_min(), range->output_max()};
}

Status check_spatial(std::initializer_list<uint32_t> values, uint32_t node, const char* what) {
  for (uint32_t v : values) {
    TL_CHECK_OR_RETURN(v <= kMaxSpatialParameter, Error::kInvalidProgram,
                       "XNNPACK node %u: %s value %u exceeds the limit %u", node, what, v,
                       kMaxSpatialParameter);
  }
  return Error::kOk;
}

Status define_nodes(const DefinitionContext& ctx) {
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t count = nodes == nullptr ? 0 : nodes->size();
  TL_RETURN_IF_ERROR(define_node_range(ctx, 0, count));
  return check_outputs_read(ctx, count);
}

Status define_node_range(const DefinitionContext& ctx, uint32_t begin, uint32_t end) {
  const auto* nodes = ctx.graph->xnodes();
  using Group = Status (*)(const DefinitionContext&, const fb_xnnpack::XNode*, uint32_t);
  static constexpr Group kGroups[] = {define_elementwise_node, define_linear_node,
                                      define_pooling_node, define_shape_node};
  for (uint32_t i = begin; i < end; ++i) {
    const fb_xnnpack::XNode* node = nodes->Get(i);
    const auto kind = node->xnode_union_type();
    const char* name = fb_xnnpack::EnumNameXNodeUnion(kind);
    TL_CHECK_OR_RETURN(kind != fb_xnnpack::XNodeUnion::NONE && name[0] != '\0',
                       Error::kInvalidProgram, "XNNPACK node %u has unknown kind %u", i,
                       static_cast<unsigned>(kind));
    TL_CHECK_OR_RETURN(node->xnode_union() != nullptr, Error::kInvalidProgram,
                       "XNNPACK node %u (%s) has no parameters table", i, name);
    Status status = Status::error(Error::kNotFound, "unhandled");
    for (Group group : kGroups) {
      status = group(ctx, node, i);
      if (status.code() != Error::kNotFound) break;
    }
    if (status.code() == Error::kNotFound) {
      return Status::error(Error::kNotSupported, "XNNPACK node %u (%s) is not supported", i, name);
    }
    if (!status.ok()) return status.with_context("XNNPACK node %u (%s)", i, name);
  }
  return Error::kOk;
}

Status check_outputs_read(const DefinitionContext& ctx, uint32_t num_nodes) {
  std::unique_ptr<uint8_t[]> live(new (std::nothrow) uint8_t[num_nodes + 1]());
  TL_CHECK_OR_RETURN(live != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory checking %u XNNPACK nodes", num_nodes);
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    const bool external_output = ctx.kinds[v] == ValueKind::kExternalOutput;
    if (ctx.producers[v] == kNoProducer) {
      TL_CHECK_OR_RETURN(!external_output, Error::kInvalidProgram,
                         "XNNPACK value %u is a graph output, but no node writes it", v);
      continue;
    }
    if (external_output || ctx.consumed[v] != 0) live[ctx.producers[v]] = 1;
  }
  const auto* nodes = ctx.graph->xnodes();
  for (uint32_t n = 0; n < num_nodes; ++n) {
    TL_CHECK_OR_RETURN(live[n] != 0, Error::kInvalidProgram,
                       "XNNPACK node %u (%s): no node reads its output and it is not a graph "
                       "output",
                       n, fb_xnnpack::EnumNameXNodeUnion(nodes->Get(n)->xnode_union_type()));
  }
  // Each output, too: XNNPACK gives an unread internal value no memory, and
  // argmax pooling then asserted on its null index output (session 21).
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    const uint32_t n = ctx.producers[v];
    if (n == kNoProducer || ctx.kinds[v] == ValueKind::kExternalOutput || ctx.consumed[v] != 0) {
      continue;
    }
    return Status::error(Error::kInvalidProgram,
                         "XNNPACK node %u (%s): its output value %u is neither read by a node "
                         "nor a graph output",
                         n, fb_xnnpack::EnumNameXNodeUnion(nodes->Get(n)->xnode_union_type()), v);
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
