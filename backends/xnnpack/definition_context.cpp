#include "backends/xnnpack/definition_context.h"

namespace torchlight {
namespace xnnpack {
namespace {

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
    case xnn_status_reallocation_required: return "reallocation required";
    case xnn_status_deprecated: return "deprecated";
  }
  return "unknown status";
}

}  // namespace

Result<uint32_t> DefinitionContext::value(uint32_t id, uint32_t node, const char* role) const {
  TL_CHECK_OR_RETURN(id < num_values, Error::kInvalidProgram,
                     "XNNPACK node %u: %s is value %u, but the graph has %u values", node, role, id,
                     num_values);
  TL_CHECK_OR_RETURN(id_map[id] != kUndefinedValue, Error::kInvalidProgram,
                     "XNNPACK node %u: %s is value %u, which is never defined", node, role, id);
  if (consumed != nullptr) consumed[id] = 1;
  if (reads != nullptr) {
    if (reads->size < reads->capacity) {
      reads->entries[reads->size++] = {node, id};
    } else {
      reads->overflow = true;
    }
  }
  return id_map[id];
}

Result<uint32_t> DefinitionContext::output(uint32_t id, uint32_t node, const char* role) const {
  TL_CHECK_OR_RETURN(id < num_values, Error::kInvalidProgram,
                     "XNNPACK node %u: %s is value %u, but the graph has %u values", node, role, id,
                     num_values);
  TL_CHECK_OR_RETURN(id_map[id] != kUndefinedValue, Error::kInvalidProgram,
                     "XNNPACK node %u: %s is value %u, which is never defined", node, role, id);
  if (kinds != nullptr) {
    TL_CHECK_OR_RETURN(kinds[id] != ValueKind::kConstant && kinds[id] != ValueKind::kExternalInput,
                       Error::kInvalidProgram,
                       "XNNPACK node %u: %s is value %u, which is a %s and cannot be written",
                       node, role, id,
                       kinds[id] == ValueKind::kConstant ? "constant" : "graph input");
  }
  if (producers != nullptr) {
    TL_CHECK_OR_RETURN(producers[id] == kNoProducer, Error::kInvalidProgram,
                       "XNNPACK node %u: %s is value %u, which node %u already writes", node, role,
                       id, producers[id]);
    producers[id] = node;
  }
  return id_map[id];
}

Result<uint32_t> DefinitionContext::optional_value(uint32_t id, uint32_t node,
                                                   const char* role) const {
  if (id == XNN_INVALID_VALUE_ID) return id;
  return value(id, node, role);
}

Status xnn_error(xnn_status status, const char* what, uint32_t index) {
  return Status::error(Error::kInvalidProgram, "XNNPACK rejected %s %u: %s", what, index,
                       status_name(status));
}

}  // namespace xnnpack
}  // namespace torchlight
