#include "extension/llm/tokenizers/byte_tokenizer.h"

#include <algorithm>

namespace torchlight {

ByteTokenizer::ByteTokenizer(int32_t bos_id, int32_t eos_id)
    : bos_id_(bos_id),
      eos_id_(eos_id),
      vocab_size_(std::max({kNumBytes, bos_id + 1, eos_id + 1})) {
  for (int32_t b = 0; b < kNumBytes; ++b) bytes_[b] = static_cast<char>(b);
}

Result<std::unique_ptr<ByteTokenizer>> ByteTokenizer::create(const ByteTokenizerOptions& options) {
  for (const int32_t id : {options.bos_id, options.eos_id}) {
    TL_CHECK_OR_RETURN(id == -1 || id == kNumBytes || id == kNumBytes + 1, Error::kInvalidArgument,
                       "byte tokenizer: a BOS/EOS id must be -1 (none), 256 or 257, got %d", id);
  }
  TL_CHECK_OR_RETURN(options.bos_id == -1 || options.bos_id != options.eos_id,
                     Error::kInvalidArgument,
                     "byte tokenizer: BOS and EOS must be different ids, both are %d",
                     options.bos_id);
  return std::unique_ptr<ByteTokenizer>(new ByteTokenizer(options.bos_id, options.eos_id));
}

Status ByteTokenizer::encode(std::string_view text, bool bos, bool eos,
                             std::vector<int32_t>* ids) const {
  TL_CHECK_OR_RETURN(ids != nullptr, Error::kInvalidArgument, "byte tokenizer: null output ids");
  TL_CHECK_OR_RETURN(!bos || bos_id_ >= 0, Error::kInvalidArgument,
                     "byte tokenizer: BOS requested, but this tokenizer has no BOS token");
  TL_CHECK_OR_RETURN(!eos || eos_id_ >= 0, Error::kInvalidArgument,
                     "byte tokenizer: EOS requested, but this tokenizer has no EOS token");
  ids->clear();
  if (bos) ids->push_back(bos_id_);
  for (const char c : text) ids->push_back(static_cast<unsigned char>(c));
  if (eos) ids->push_back(eos_id_);
  return Error::kOk;
}

Result<std::string_view> ByteTokenizer::decode(int32_t prev, int32_t id) const {
  if (id >= 0 && id < kNumBytes) return std::string_view(&bytes_[id], 1);
  if (id >= 0 && (id == bos_id_ || id == eos_id_)) return std::string_view();
  return Status::error(Error::kInvalidArgument,
                       "byte tokenizer: token id %d is outside the vocabulary of %d", id,
                       vocab_size_);
}

}  // namespace torchlight
