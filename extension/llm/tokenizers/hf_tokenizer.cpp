#include "extension/llm/tokenizers/hf_tokenizer.h"

#include <queue>

#include "extension/llm/tokenizers/byte_alphabet.h"
#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

void replace_all(std::string* s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s->find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(*s, pos, hit - pos);
    out.append(to);
  }
  if (pos == 0) return;
  out.append(*s, pos, std::string::npos);
  *s = std::move(out);
}

// Splits every piece at `cut(piece)`'s boundaries.
template <typename NextLength>
void split_pieces(std::vector<std::string>* pieces, const NextLength& next_length) {
  std::vector<std::string> out;
  out.reserve(pieces->size());
  for (const std::string& piece : *pieces) {
    std::string_view rest(piece);
    while (!rest.empty()) {
      const size_t n = next_length(rest);
      out.emplace_back(rest.substr(0, n));
      rest.remove_prefix(n);
    }
  }
  *pieces = std::move(out);
}

}  // namespace

void HfTokenizer::pre_tokenize(std::string text, bool at_start,
                               std::vector<std::string>* pieces) const {
  pieces->clear();
  if (text.empty()) return;
  pieces->push_back(std::move(text));
  for (const PreTokenizeStep& step : pipeline_.pre_tokenizers) {
    switch (step.kind) {
      case PreTokenizeStep::Kind::kSplitPattern:
        split_pieces(pieces, [&](std::string_view rest) { return next_pretoken(step.pattern, rest); });
        break;
      case PreTokenizeStep::Kind::kSplitString:
        // Isolated: each occurrence is a piece of its own.
        split_pieces(pieces, [&](std::string_view rest) {
          if (starts_with(rest, step.text)) return step.text.size();
          const size_t hit = rest.find(step.text);
          return hit == std::string_view::npos ? rest.size() : hit;
        });
        break;
      case PreTokenizeStep::Kind::kByteLevel: {
        if (step.add_prefix_space) {
          for (std::string& piece : *pieces) {
            if (!starts_with(piece, " ")) piece.insert(0, 1, ' ');
          }
        }
        if (step.use_regex) {
          split_pieces(pieces, [](std::string_view rest) {
            return next_pretoken(PretokenizePattern::kGpt2, rest);
          });
        }
        std::string spelled;
        for (std::string& piece : *pieces) {
          spelled.clear();
          bytes_to_alphabet(piece, &spelled);
          piece.swap(spelled);
        }
        break;
      }
      case PreTokenizeStep::Kind::kMetaspace: {
        const std::string& mark = step.text;
        for (size_t i = 0; i < pieces->size(); ++i) {
          std::string& piece = (*pieces)[i];
          replace_all(&piece, " ", mark);
          const bool prepend = step.prepend == PreTokenizeStep::Prepend::kAlways ||
                               (step.prepend == PreTokenizeStep::Prepend::kFirst && at_start &&
                                i == 0);
          if (prepend && !starts_with(piece, mark)) piece.insert(0, mark);
        }
        if (step.split) {
          // Each mark starts a new piece and stays with the text after it.
          split_pieces(pieces, [&](std::string_view rest) {
            const size_t hit = rest.find(mark, starts_with(rest, mark) ? mark.size() : 0);
            return hit == std::string_view::npos ? rest.size() : hit;
          });
        }
        break;
      }
    }
  }
}

void HfTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>* ids) const {
  if (pipeline_.ignore_merges) {
    const int32_t whole = vocab_.find(piece);
    if (whole >= 0) {
      ids->push_back(whole);
      return;
    }
  }
  // Symbols: one per character (or per byte when falling back), linked so
  // merges can remove the right one in O(1).
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  std::vector<Symbol> symbols;
  bool last_was_unk = false;
  for (size_t pos = 0; pos < piece.size();) {
    const Utf8Char u = decode_utf8(piece, pos);
    const std::string_view ch = piece.substr(pos, u.size);
    pos += u.size;
    const int32_t id = vocab_.find(ch);
    if (id >= 0) {
      symbols.push_back({id, 0, 0});
      last_was_unk = false;
      continue;
    }
    bool all_bytes = pipeline_.byte_fallback;
    for (const char c : ch) all_bytes = all_bytes && byte_piece_[static_cast<uint8_t>(c)] >= 0;
    if (all_bytes) {
      for (const char c : ch) symbols.push_back({byte_piece_[static_cast<uint8_t>(c)], 0, 0});
      last_was_unk = false;
    } else if (pipeline_.unk_id >= 0 && !(pipeline_.fuse_unk && last_was_unk)) {
      symbols.push_back({pipeline_.unk_id, 0, 0});
      last_was_unk = true;
    }
  }
  const auto n = static_cast<int32_t>(symbols.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols[i].prev = i - 1;
    symbols[i].next = i + 1 < n ? i + 1 : -1;
  }

  // Candidate merges, lowest rank first, then leftmost. An entry goes stale
  // when either side has merged since; it is then skipped.
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t left;
    int32_t right;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto consider = [&](int32_t pos) {
    if (pos < 0 || symbols[pos].next < 0) return;
    const int32_t left = symbols[pos].id;
    const int32_t right = symbols[symbols[pos].next].id;
    const MergeTable::Merge* merge = merges_.find(left, right);
    if (merge != nullptr) queue.push({merge->rank, pos, left, right});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.pos];
    if (left.id != c.left || left.next < 0 || symbols[left.next].id != c.right) continue;
    const int32_t gone = left.next;
    left.id = merges_.find(c.left, c.right)->result;
    left.next = symbols[gone].next;
    if (left.next >= 0) symbols[left.next].prev = c.pos;
    symbols[gone].id = -1;
    consider(left.prev);
    consider(c.pos);
  }
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = symbols[i].next) ids->push_back(symbols[i].id);
}

void HfTokenizer::encode_stretch(std::string_view text, bool at_start,
                                 std::vector<int32_t>* ids) const {
  if (text.empty()) return;
  std::string normalized(text);
  for (const NormalizeStep& step : pipeline_.normalizers) {
    if (step.kind == NormalizeStep::Kind::kPrepend) {
      if (!normalized.empty()) normalized.insert(0, step.to);
    } else {
      replace_all(&normalized, step.from, step.to);
    }
  }
  std::vector<std::string> pieces;
  pre_tokenize(std::move(normalized), at_start, &pieces);
  for (const std::string& piece : pieces) encode_piece(piece, ids);
}

void HfTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  const SpecialTokens& matched = allow_special_ ? added_ : added_plain_;
  size_t pos = 0;
  while (pos < text.size()) {
    const SpecialTokens::Match m = matched.find(text, pos);
    const size_t end = m.pos == std::string_view::npos ? text.size() : m.pos;
    encode_stretch(text.substr(pos, end - pos), pos == 0, ids);
    if (m.pos == std::string_view::npos) break;
    ids->push_back(m.id);
    pos = m.pos + m.size;
  }
}

Result<std::string_view> HfTokenizer::decode(int32_t prev, int32_t id) const {
  TL_CHECK_OR_RETURN(decoded_.contains(id), Error::kInvalidArgument,
                     "decode: token id %d is not in this tokenizer.json vocabulary (size %d)", id,
                     decoded_.id_limit());
  std::string_view text = decoded_.bytes(id);
  const std::string& strip = pipeline_.strip_at_start;
  // Only the very first token, as the library's Strip decoder does (after a
  // printed BOS the space stays: "<s> Hello").
  if (prev < 0 && !strip.empty() && starts_with(text, strip)) {
    text.remove_prefix(strip.size());
  }
  return text;
}

}  // namespace torchlight
