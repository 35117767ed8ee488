#include "extension/llm/tokenizers/token_table.h"

namespace torchlight {

uint64_t TokenTable::hash(std::string_view bytes) {
  // FNV-1a, then a final mix so the low bits used for slots are well spread.
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

void TokenTable::grow_index() {
  const size_t slots = index_.empty() ? 1024 : index_.size() * 2;
  index_.assign(slots, -1);
  for (int32_t id = 0; id < id_limit(); ++id) {
    if (entries_[id].present && find(bytes(id)) < 0) insert_index(id, hash(bytes(id)));
  }
}

void TokenTable::insert_index(int32_t id, uint64_t h) {
  const size_t mask = index_.size() - 1;
  size_t slot = static_cast<size_t>(h) & mask;
  while (index_[slot] >= 0) slot = (slot + 1) & mask;
  index_[slot] = id;
}

TokenTable::AddResult TokenTable::add(int32_t id, std::string_view token) {
  if (id < 0 || id >= accepted_id_limit()) return AddResult::kIdOutOfRange;
  if (contains(id)) return AddResult::kDuplicateId;
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(static_cast<size_t>(id) + 1);
  const int32_t earlier = find(token);
  Entry& e = entries_[id];
  e.offset = arena_.size();
  e.size = static_cast<uint32_t>(token.size());
  e.present = true;
  arena_.append(token.data(), token.size());
  ++count_;
  if (token.size() > max_bytes_) max_bytes_ = token.size();
  if (earlier >= 0) {
    // find() answers the lowest id among equal byte strings.
    if (id < earlier) {
      const size_t mask = index_.size() - 1;
      size_t slot = static_cast<size_t>(hash(token)) & mask;
      while (index_[slot] != earlier) slot = (slot + 1) & mask;
      index_[slot] = id;
    }
    return AddResult::kDuplicateBytes;
  }
  // Keep the load factor at most 1/2 so probes stay short.
  if ((indexed_ + 1) * 2 > index_.size()) {
    grow_index();
  } else {
    insert_index(id, hash(token));
  }
  ++indexed_;
  return AddResult::kAdded;
}

int32_t TokenTable::find(std::string_view token) const {
  if (index_.empty()) return -1;
  const size_t mask = index_.size() - 1;
  size_t slot = static_cast<size_t>(hash(token)) & mask;
  while (true) {
    const int32_t id = index_[slot];
    if (id < 0) return -1;
    const Entry& e = entries_[id];
    if (e.size == token.size() &&
        std::string_view(arena_.data() + e.offset, e.size) == token) {
      return id;
    }
    slot = (slot + 1) & mask;
  }
}

}  // namespace torchlight
