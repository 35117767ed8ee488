#include "backends/xnnpack/payload_header.h"

#include <cstring>

namespace torchlight {
namespace xnnpack {
namespace {

// Header field offsets, all little-endian (spec section 1.1).
constexpr size_t kMagicOffset = 4;
constexpr size_t kFlatbufferOffsetField = 10;
constexpr size_t kFlatbufferSizeField = 14;
constexpr size_t kConstantOffsetField = 18;
constexpr size_t kConstantSizeField = 22;
// A flatbuffer needs at least its root offset and file identifier.
constexpr uint64_t kMinFlatbufferSize = 8;

template <typename T>
T read_le(const uint8_t* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

}  // namespace

Result<PayloadSections> parse_payload_sections(Span<const uint8_t> payload) {
  const uint64_t size = payload.size();
  TL_CHECK_OR_RETURN(payload.data() != nullptr && size >= kMinPayloadSize,
                     Error::kDelegateInvalidCompatibility,
                     "XNNPACK payload is %llu bytes; at least %zu are needed",
                     static_cast<unsigned long long>(size), kMinPayloadSize);
  const uint8_t* p = payload.data();
  PayloadSections out;
  if (std::memcmp(p + kMagicOffset, "XH00", 4) != 0) {
    out.flatbuffer = payload;
    out.legacy = true;
    return out;
  }
  const uint64_t fb_offset = read_le<uint32_t>(p + kFlatbufferOffsetField);
  const uint64_t fb_size = read_le<uint32_t>(p + kFlatbufferSizeField);
  const uint64_t const_offset = read_le<uint32_t>(p + kConstantOffsetField);
  const uint64_t const_size = read_le<uint64_t>(p + kConstantSizeField);
  TL_CHECK_OR_RETURN(fb_offset >= kMinPayloadSize && fb_size >= kMinFlatbufferSize &&
                         fb_offset <= size && fb_size <= size - fb_offset,
                     Error::kInvalidProgram,
                     "XNNPACK header puts the flatbuffer at [%llu, +%llu), outside the %llu-byte "
                     "payload",
                     static_cast<unsigned long long>(fb_offset),
                     static_cast<unsigned long long>(fb_size),
                     static_cast<unsigned long long>(size));
  TL_CHECK_OR_RETURN(const_offset >= fb_offset + fb_size && const_offset <= size &&
                         const_size <= size - const_offset,
                     Error::kInvalidProgram,
                     "XNNPACK header puts the constants at [%llu, +%llu); they must follow the "
                     "flatbuffer (ends at %llu) inside the %llu-byte payload",
                     static_cast<unsigned long long>(const_offset),
                     static_cast<unsigned long long>(const_size),
                     static_cast<unsigned long long>(fb_offset + fb_size),
                     static_cast<unsigned long long>(size));
  out.flatbuffer = {p + fb_offset, static_cast<size_t>(fb_size)};
  out.constants = {p + const_offset, static_cast<size_t>(const_size)};
  return out;
}

}  // namespace xnnpack
}  // namespace torchlight
