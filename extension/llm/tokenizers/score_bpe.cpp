#include "extension/llm/tokenizers/score_bpe.h"

#include <cstdio>
#include <queue>

#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

// One byte per value, so a byte piece can decode to a view of one byte.
struct ByteStrings {
  char bytes[256];
  constexpr ByteStrings() : bytes() {
    for (int i = 0; i < 256; ++i) bytes[i] = static_cast<char>(i);
  }
};
constexpr ByteStrings kByteStrings;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte a "<0xHH>" spelling stands for, or -1.
int byte_piece_value(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  const int hi = hex_digit(s[3]);
  const int lo = hex_digit(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

void ScoreBpe::add_piece(std::string_view text, float score, bool matchable) {
  const int32_t id = size();
  (void)pieces_.add(id, text);  // ids are fresh and in range; equal spellings are fine
  scores_.push_back(score);
  matchable_.push_back(matchable ? 1 : 0);
}

void ScoreBpe::finish(int32_t unk_id, bool byte_fallback) {
  unk_id_ = unk_id;
  byte_value_.assign(scores_.size(), -1);
  byte_fallback_complete_ = byte_fallback;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_piece_[b] = pieces_.find(name);
    if (byte_piece_[b] < 0) byte_fallback_complete_ = false;
  }
  for (int32_t id = 0; id < size(); ++id) {
    const int v = byte_piece_value(pieces_.bytes(id));
    if (v >= 0) byte_value_[static_cast<size_t>(id)] = static_cast<int16_t>(v);
  }
}

int32_t ScoreBpe::find(std::string_view text) const {
  const int32_t id = pieces_.find(text);
  return id >= 0 && matchable_[static_cast<size_t>(id)] ? id : -1;
}

void ScoreBpe::encode(std::string_view text, bool dummy_prefix, std::vector<int32_t>* ids) const {
  if (text.empty()) return;
  // Symbols of this call, merged in place at the end of *ids. A symbol is
  // mergeable unless it is a byte-fallback or unknown piece.
  const size_t base = ids->size();
  std::vector<uint8_t> mergeable;
  mergeable.reserve(text.size() + 1);
  auto push = [&](int32_t id, bool can_merge) {
    ids->push_back(id);
    mergeable.push_back(can_merge ? 1 : 0);
  };
  if (dummy_prefix) {
    const int32_t space = find(" ");
    if (space >= 0) {
      push(space, true);
    } else if (byte_piece_[' '] >= 0) {
      push(byte_piece_[' '], false);
    } else if (unk_id_ >= 0) {
      push(unk_id_, false);
    }
  }
  bool after_unknown = false;  // the last symbol stands for unknown characters
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char u = decode_utf8(text, pos);
    const std::string_view ch = text.substr(pos, u.size);
    pos += u.size;
    const int32_t id = u.code_point == kInvalidCodePoint ? -1 : find(ch);
    if (id >= 0) {
      push(id, true);
      after_unknown = false;
      continue;
    }
    if (byte_fallback_complete_) {
      for (const char c : ch) push(byte_piece_[static_cast<uint8_t>(c)], false);
    } else if (unk_id_ >= 0 && !after_unknown) {
      // A run of unknown characters is one unknown piece, as SentencePiece
      // emits it (unknown symbols never merge, so runs stay runs).
      push(unk_id_, false);
      after_unknown = true;
    }
  }

  // Merge with a max-heap of candidate pairs, ordered by score and then by
  // position: the same choice as run.c's scan for the best pair (leftmost
  // on ties) in O(n log n) rather than O(n^2), which matters because
  // SentencePiece merges across the whole text, not per word. Symbols form
  // a linked list; a popped candidate whose symbols changed is stale.
  const size_t n = ids->size() - base;
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  std::vector<Symbol> sym(n);
  for (size_t i = 0; i < n; ++i) {
    sym[i] = {(*ids)[base + i], static_cast<int32_t>(i) - 1,
              i + 1 < n ? static_cast<int32_t>(i + 1) : -1};
  }
  struct Candidate {
    float score;
    int32_t left;  // symbol index; smaller is further left
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t merged;
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  std::string joined;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0 || !mergeable[static_cast<size_t>(left)] ||
        !mergeable[static_cast<size_t>(right)]) {
      return;
    }
    joined.assign(pieces_.bytes(sym[left].id));
    joined.append(pieces_.bytes(sym[right].id));
    const int32_t merged = find(joined);
    if (merged >= 0) {
      heap.push({scores_[static_cast<size_t>(merged)], left, right, sym[left].id, sym[right].id,
                 merged});
    }
  };
  for (size_t i = 0; i + 1 < n; ++i) consider(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& l = sym[c.left];
    Symbol& r = sym[c.right];
    // A merge only lengthens a symbol's piece, so unchanged ids and
    // adjacency mean the candidate is current.
    if (l.next != c.right || l.id != c.left_id || r.id != c.right_id) continue;
    l.id = c.merged;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = c.left;
    r.id = -1;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  ids->resize(base);
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = sym[i].next) ids->push_back(sym[i].id);
}

std::string_view ScoreBpe::decode(int32_t prev, int32_t id, int32_t bos_id) const {
  const int16_t byte = byte_value_[static_cast<size_t>(id)];
  if (byte >= 0) return std::string_view(&kByteStrings.bytes[byte], 1);
  std::string_view piece = pieces_.bytes(id);
  if (prev == bos_id && bos_id >= 0 && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
  return piece;
}

}  // namespace torchlight
