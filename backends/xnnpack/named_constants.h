// NamedConstants: the payload constants kept in the program's named data
// rather than in the payload (upstream main's format: a ConstantDataOffset
// with `named_key` set; shared/spec/xnnpack-format.md, "Constants").
//
// They are loaded once at init and held for the delegate's whole life:
// XNNPACK packs only convolution and fully-connected weights and reads every
// other constant (a constant add operand, a PReLU slope) by pointer.
#pragma once

#include <cstdint>

#include "runtime/core/freeable_buffer.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/named_data_map.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace fb_xnnpack {
struct XNNGraph;
}

namespace torchlight {
namespace xnnpack {

class NamedConstants {
 public:
  NamedConstants() = default;
  NamedConstants(NamedConstants&& other) noexcept { *this = static_cast<NamedConstants&&>(other); }
  NamedConstants& operator=(NamedConstants&& other) noexcept;
  NamedConstants(const NamedConstants&) = delete;
  NamedConstants& operator=(const NamedConstants&) = delete;
  ~NamedConstants() { release(); }

  /// Loads the named constant_data entries of `graph` (verified) from `map`,
  /// each key once. The arrays come from `allocator`, which must outlive
  /// this object. Errors: kInvalidProgram when an entry names a key and
  /// there is no map or the map lacks it (the key is named), and the
  /// loader's errors.
  static Result<NamedConstants> load(const fb_xnnpack::XNNGraph& graph, const NamedDataMap* map,
                                     MemoryAllocator* allocator);

  /// The bytes of constant_data[index]; empty when that entry is not named.
  Span<const uint8_t> bytes(uint32_t index) const {
    return index < count_ ? views_[index] : Span<const uint8_t>();
  }

 private:
  void release();

  Span<const uint8_t>* views_ = nullptr;  // Per constant_data entry.
  FreeableBuffer* owned_ = nullptr;       // Per entry: the first entry of each key owns it.
  uint32_t count_ = 0;
};

}  // namespace xnnpack
}  // namespace torchlight
