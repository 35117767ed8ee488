// Structural checks on an XNNPACK payload's flatbuffer, run before any of it
// is used: identifier, flatbuffers Verifier, list sizes, value ids and
// external ids. Per-value facts (datatype, quantization, constant bytes) are
// checked where each value is defined (value_definition.h), per-node facts
// where each node is defined (node_definition.h).
#pragma once

#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace fb_xnnpack {
struct XNNGraph;
}

namespace torchlight {
namespace xnnpack {

/// Upper bounds on what a payload may ask for; the payload comes from a file.
inline constexpr uint32_t kMaxExterns = 4096;
inline constexpr uint32_t kMaxValues = 1u << 20;
inline constexpr uint32_t kMaxNodes = 1u << 20;

/// Returns the verified root of `flatbuffer`. Checks: identifier XN00 or
/// XN01 (kDelegateInvalidCompatibility), the Verifier, xvalues present,
/// counts within the bounds above, every value's id_out < number of values
/// and unique, external flags only INPUT or OUTPUT (not both), external ids
/// < num_externs and unique (kInvalidProgram).
Result<const fb_xnnpack::XNNGraph*> verify_graph(Span<const uint8_t> flatbuffer);

}  // namespace xnnpack
}  // namespace torchlight
