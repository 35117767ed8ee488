#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

Status decode_all(const Tokenizer& tokenizer, Span<const int32_t> ids, std::string* text) {
  TL_CHECK_OR_RETURN(text != nullptr, Error::kInvalidArgument, "decode_all: null output string");
  int32_t prev = -1;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto piece = tokenizer.decode(prev, ids[i]);
    if (!piece.ok()) {
      Status s = piece.status();
      return s.with_context("decoding token %zu of %zu", i, ids.size());
    }
    text->append(piece->data(), piece->size());
    prev = ids[i];
  }
  return Error::kOk;
}

}  // namespace torchlight
