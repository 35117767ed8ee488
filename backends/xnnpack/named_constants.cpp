#include "backends/xnnpack/named_constants.h"

#include <string_view>
#include <utility>

#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

std::string_view key_of(const fb_xnnpack::ConstantDataOffset* entry) {
  const auto* key = entry == nullptr ? nullptr : entry->named_key();
  return key == nullptr ? std::string_view() : std::string_view(key->c_str(), key->size());
}

}  // namespace

NamedConstants& NamedConstants::operator=(NamedConstants&& other) noexcept {
  if (this != &other) {
    release();
    views_ = other.views_;
    owned_ = other.owned_;
    count_ = other.count_;
    other.views_ = nullptr;
    other.owned_ = nullptr;
    other.count_ = 0;
  }
  return *this;
}

void NamedConstants::release() {
  // The arrays belong to the allocator; only the buffers are freed.
  for (uint32_t i = 0; i < count_; ++i) owned_[i].~FreeableBuffer();
  views_ = nullptr;
  owned_ = nullptr;
  count_ = 0;
}

Result<NamedConstants> NamedConstants::load(const fb_xnnpack::XNNGraph& graph,
                                            const NamedDataMap* map, MemoryAllocator* allocator) {
  NamedConstants named;
  const auto* entries = graph.constant_data();
  const uint32_t count = entries == nullptr ? 0 : entries->size();
  bool any = false;
  for (uint32_t i = 0; i < count && !any; ++i) any = entries->Get(i)->named_key() != nullptr;
  if (!any) return named;  // Upstream 0.5's payloads: every constant is inline.

  named.views_ = allocator->allocate_array<Span<const uint8_t>>(count);
  named.owned_ = allocator->allocate_array<FreeableBuffer>(count);
  TL_CHECK_OR_RETURN(named.views_ != nullptr && named.owned_ != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for %u XNNPACK named constants", count);
  named.count_ = count;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string_view key = key_of(entries->Get(i));
    if (entries->Get(i)->named_key() == nullptr) continue;
    // Upstream deduplicates blobs by content, so entries may share a key.
    uint32_t first = 0;
    while (first < i && (entries->Get(first)->named_key() == nullptr ||
                         key_of(entries->Get(first)) != key)) {
      ++first;
    }
    if (first < i) {
      named.views_[i] = named.views_[first];
      continue;
    }
    TL_CHECK_OR_RETURN(map != nullptr, Error::kInvalidProgram,
                       "XNNPACK constant %u is named data '%.*s', but the program has no named "
                       "data",
                       i, static_cast<int>(key.size()), key.data());
    Result<FreeableBuffer> data = map->get_data(key);
    if (!data.ok()) {
      Status status = data.status();
      const Error code = status.code() == Error::kNotFound ? Error::kInvalidProgram : status.code();
      return Status::error(code, "XNNPACK constant %u is named data '%.*s': %s", i,
                           static_cast<int>(key.size()), key.data(), status.message());
    }
    named.owned_[i] = std::move(data.get());
    named.views_[i] = named.owned_[i].bytes();
  }
  return named;
}

}  // namespace xnnpack
}  // namespace torchlight
