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

void ByteTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  for (const char c : text) ids->push_back(static_cast<unsigned char>(c));
}

Result<std::string_view> ByteTokenizer::decode(int32_t prev, int32_t id) const {
  if (id >= 0 && id < kNumBytes) return std::string_view(&bytes_[id], 1);
  if (id >= 0 && (id == bos_id_ || id == eos_id_)) return std::string_view();
  return Status::error(Error::kInvalidArgument,
                       "byte tokenizer: token id %d is outside the vocabulary of %d", id,
                       vocab_size_);
}

}  // namespace torchlight
