// ByteTokenizer: token id b is byte b; 256 tokens, no merges.
//
// The tokenizer of the project's shipped model (examples/llm/train_gpt.py):
// a prompt's UTF-8 bytes are its ids, and a model's output ids are written
// out as bytes. Any byte string round-trips, including invalid UTF-8. There
// is no vocabulary file. BOS and EOS are optional extra ids at 256 and up,
// for models trained with them; the shipped model has neither.
#pragma once

#include <cstdint>
#include <memory>

#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

struct ByteTokenizerOptions {
  /// Extra ids after the 256 bytes; -1 for none. When set, must be 256 or
  /// 257 and differ from each other. They decode to "".
  int32_t bos_id = -1;
  int32_t eos_id = -1;
};

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kNumBytes = 256;

  /// Errors: kInvalidArgument when a BOS/EOS id is neither -1 nor 256/257,
  /// or both name the same id.
  static Result<std::unique_ptr<ByteTokenizer>> create(const ByteTokenizerOptions& options = {});

  /// One byte for ids 0..255; "" for BOS/EOS. Errors: kInvalidArgument for
  /// any other id.
  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "byte tokenizer"; }

  ByteTokenizer(int32_t bos_id, int32_t eos_id);

  int32_t bos_id_;
  int32_t eos_id_;
  int32_t vocab_size_;
  char bytes_[kNumBytes];  // bytes_[b] == b: decode() returns views into it
};

}  // namespace torchlight
