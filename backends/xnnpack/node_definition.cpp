#include "backends/xnnpack/node_definition.h"

#include <limits>

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

Status define_nodes(const DefinitionContext& ctx) {
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t count = nodes == nullptr ? 0 : nodes->size();
  using Group = Status (*)(const DefinitionContext&, const fb_xnnpack::XNode*, uint32_t);
  static constexpr Group kGroups[] = {define_elementwise_node, define_linear_node,
                                      define_pooling_node, define_shape_node};
  for (uint32_t i = 0; i < count; ++i) {
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

}  // namespace xnnpack
}  // namespace torchlight
