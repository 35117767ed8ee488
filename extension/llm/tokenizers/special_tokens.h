// SpecialTokens: control strings such as "<|endoftext|>" that a tokenizer
// maps straight to one id when they appear in the text, before any
// pre-tokenization or merging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torchlight {

class SpecialTokens {
 public:
  struct Match {
    size_t pos;   // byte offset in the text; std::string_view::npos for none
    size_t size;  // bytes matched
    int32_t id;
  };

  /// Adds a special token. Empty strings are ignored (they would match
  /// everywhere); the caller rejects duplicates.
  void add(std::string_view text, int32_t id);

  /// The leftmost special token in `text` at or after `from`; the longest
  /// when several start there. {npos, 0, -1} when there is none.
  Match find(std::string_view text, size_t from) const;

  /// The id of special token `text`, or -1.
  int32_t id_of(std::string_view text) const;

  /// The text of the special token with id `id`; empty when none has it.
  std::string_view text_of(int32_t id) const;

  /// The largest id, -1 when empty.
  int32_t max_id() const;

  bool empty() const { return tokens_.empty(); }
  size_t size() const { return tokens_.size(); }

 private:
  struct Token {
    std::string text;
    int32_t id;
  };
  std::vector<Token> tokens_;
  bool first_byte_[256] = {};  // bytes that start some token: skip others fast
};

/// Appends the ids of `text` to `ids`: when `match_specials` is set, each
/// special token found becomes its id; the stretches between (or the whole
/// text) go through `encode_ordinary(std::string_view, std::vector<int32_t>*)`.
/// The split GPT-2 BPE and tiktoken share.
template <typename EncodeOrdinary>
void encode_around_specials(const SpecialTokens& specials, bool match_specials,
                            std::string_view text, std::vector<int32_t>* ids,
                            const EncodeOrdinary& encode_ordinary) {
  constexpr SpecialTokens::Match kNone{std::string_view::npos, 0, -1};
  size_t pos = 0;
  while (pos < text.size()) {
    const SpecialTokens::Match m = match_specials ? specials.find(text, pos) : kNone;
    const size_t end = m.pos == std::string_view::npos ? text.size() : m.pos;
    encode_ordinary(text.substr(pos, end - pos), ids);
    if (m.pos == std::string_view::npos) break;
    ids->push_back(m.id);
    pos = m.pos + m.size;
  }
}

}  // namespace torchlight
