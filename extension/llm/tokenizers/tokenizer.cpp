#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

Status Tokenizer::encode(std::string_view text, bool bos, bool eos,
                         std::vector<int32_t>* ids) const {
  TL_CHECK_OR_RETURN(ids != nullptr, Error::kInvalidArgument, "encode: null output vector");
  TL_CHECK_OR_RETURN(!bos || bos_id() >= 0, Error::kInvalidArgument,
                     "encode: BOS requested, but this %s has no BOS token", kind());
  TL_CHECK_OR_RETURN(!eos || eos_id() >= 0, Error::kInvalidArgument,
                     "encode: EOS requested, but this %s has no EOS token", kind());
  ids->clear();
  if (bos) ids->push_back(bos_id());
  append_tokens(text, ids);
  if (eos) ids->push_back(eos_id());
  return Error::kOk;
}

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
