// PayloadSections: where the flatbuffer and the constant region sit inside
// an XNNPACK delegate payload (shared/spec/xnnpack-format.md section 1).
//
// A payload is either "header mode" (bytes 4..8 are "XH00": a 30-byte header
// gives the flatbuffer and constant-region offsets) or "legacy mode" (the
// whole payload is the flatbuffer; constants live in the graph's
// constant_buffer table).
#pragma once

#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace xnnpack {

/// Smallest payload either mode accepts; shorter is an error, not legacy.
inline constexpr size_t kMinPayloadSize = 30;

struct PayloadSections {
  Span<const uint8_t> flatbuffer;  // Borrows the payload.
  Span<const uint8_t> constants;   // Empty in legacy mode.
  bool legacy = false;
};

/// Splits `payload` into its sections, checking that both regions lie inside
/// it and do not overlap. Errors: kDelegateInvalidCompatibility (too short),
/// kInvalidProgram (regions out of bounds).
Result<PayloadSections> parse_payload_sections(Span<const uint8_t> payload);

}  // namespace xnnpack
}  // namespace torchlight
