// MergeTable: a BPE model's merges, (left id, right id) -> (rank, result id),
// shared by the rank-ordered BPE tokenizers (GPT-2's files, tokenizer.json).
#pragma once

#include <cstdint>
#include <unordered_map>

namespace torchlight {

class MergeTable {
 public:
  struct Merge {
    int32_t rank;    // lower merges first
    int32_t result;  // the merged token's id
  };

  /// Adds the merge of `left` + `right`; false (and no change) when that
  /// pair already has one.
  bool add(int32_t left, int32_t right, Merge merge) {
    return merges_.emplace(key(left, right), merge).second;
  }

  /// The merge of `left` + `right`, or null.
  const Merge* find(int32_t left, int32_t right) const {
    const auto it = merges_.find(key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }

  size_t size() const { return merges_.size(); }

 private:
  static uint64_t key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace torchlight
