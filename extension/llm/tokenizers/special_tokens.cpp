#include "extension/llm/tokenizers/special_tokens.h"

namespace torchlight {

void SpecialTokens::add(std::string_view text, int32_t id) {
  if (text.empty()) return;
  tokens_.push_back(Token{std::string(text), id});
  first_byte_[static_cast<uint8_t>(text[0])] = true;
}

SpecialTokens::Match SpecialTokens::find(std::string_view text, size_t from) const {
  if (tokens_.empty()) return {std::string_view::npos, 0, -1};
  for (size_t pos = from; pos < text.size(); ++pos) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) continue;
    const std::string_view rest = text.substr(pos);
    const Token* best = nullptr;
    for (const Token& t : tokens_) {
      if (rest.size() >= t.text.size() && rest.compare(0, t.text.size(), t.text) == 0 &&
          (best == nullptr || t.text.size() > best->text.size())) {
        best = &t;
      }
    }
    if (best != nullptr) return {pos, best->text.size(), best->id};
  }
  return {std::string_view::npos, 0, -1};
}

int32_t SpecialTokens::id_of(std::string_view text) const {
  for (const Token& t : tokens_) {
    if (t.text == text) return t.id;
  }
  return -1;
}

std::string_view SpecialTokens::text_of(int32_t id) const {
  for (const Token& t : tokens_) {
    if (t.id == id) return t.text;
  }
  return {};
}

int32_t SpecialTokens::max_id() const {
  int32_t m = -1;
  for (const Token& t : tokens_) m = t.id > m ? t.id : m;
  return m;
}

}  // namespace torchlight
