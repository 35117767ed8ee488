// TokenTable: token ids <-> the byte strings they stand for.
//
// All token bytes live in one arena; an open-addressing hash index answers
// "which id has exactly these bytes" for a string_view without allocating,
// which is what every BPE merge loop asks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torchlight {

class TokenTable {
 public:
  /// Largest id a table accepts, so ids stay far from int32 overflow.
  static constexpr int32_t kMaxId = (1 << 26) - 1;
  /// How far ids may run ahead of the tokens added: the id -> bytes table is
  /// dense, so it stays proportional to the tokens a file really holds
  /// instead of letting a few bytes naming id 2^26 cost a gigabyte.
  static constexpr int32_t kMaxIdGap = 1 << 16;

  enum class AddResult {
    kAdded,
    kDuplicateId,     // `id` already has bytes; nothing changed
    kDuplicateBytes,  // the bytes already belong to another id; see add()
    kIdOutOfRange,    // id < 0 or id >= accepted_id_limit(); nothing changed
  };

  /// Gives token `id` the bytes `bytes` (copied). When another id already has
  /// the same bytes, the id is still added (decoding works), find() answers
  /// the lowest of those ids, and the result is kDuplicateBytes so a loader
  /// can decide whether that is an error.
  AddResult add(int32_t id, std::string_view bytes);

  /// The id whose bytes equal `bytes` (the lowest on duplicates), or -1.
  int32_t find(std::string_view bytes) const;

  /// Whether `id` has been added.
  bool contains(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < entries_.size() && entries_[id].present;
  }

  /// The bytes of `id`; empty when `id` is absent. Valid while the table
  /// lives and is not added to.
  std::string_view bytes(int32_t id) const {
    if (!contains(id)) return {};
    return std::string_view(arena_.data() + entries_[id].offset, entries_[id].size);
  }

  /// One past the largest id added (0 when empty).
  int32_t id_limit() const { return static_cast<int32_t>(entries_.size()); }

  /// One past the largest id add() accepts now: kMaxIdGap past twice the
  /// tokens added so far, and never above kMaxId. Loaders add ids in
  /// increasing order (or sort them first), so dense vocabularies always fit.
  int32_t accepted_id_limit() const {
    const int64_t limit = 2 * static_cast<int64_t>(count_) + kMaxIdGap;
    return limit > kMaxId ? kMaxId + 1 : static_cast<int32_t>(limit);
  }

  /// Number of ids added.
  size_t size() const { return count_; }

  /// Longest token in bytes.
  size_t max_token_bytes() const { return max_bytes_; }

 private:
  struct Entry {
    uint64_t offset = 0;
    uint32_t size = 0;
    bool present = false;
  };

  static uint64_t hash(std::string_view bytes);
  void insert_index(int32_t id, uint64_t h);
  void grow_index();

  std::string arena_;
  std::vector<Entry> entries_;
  std::vector<int32_t> index_;  // power-of-two slots; -1 = empty
  size_t count_ = 0;
  size_t indexed_ = 0;
  size_t max_bytes_ = 0;
};

}  // namespace torchlight
