// Tokenizer: text <-> token ids, the interface every format implements.
//
// One class per file format (gpt2_bpe_tokenizer.h, tiktoken_tokenizer.h,
// llama2c_tokenizer.h, sentencepiece_tokenizer.h). Loaders return
// Result<std::unique_ptr<...>>; nothing throws. After a successful load a
// tokenizer is immutable, so encode() and decode() may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"

namespace torchlight {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// Replaces the contents of `*ids` with the tokens of `text`, preceded by
  /// bos_id() when `bos` and followed by eos_id() when `eos`. The vector's
  /// capacity is reused, so a caller that keeps one vector stops allocating.
  /// Any bytes are accepted, including invalid UTF-8 (see each format).
  ///
  /// Errors: kInvalidArgument when `ids` is null, or when `bos`/`eos` is
  /// requested from a tokenizer that has no such token (id -1).
  Status encode(std::string_view text, bool bos, bool eos, std::vector<int32_t>* ids) const;

  /// The bytes token `id` adds to the text when it follows token `prev`
  /// (-1 for the first token): llama2.c-style tokenizers drop the leading
  /// space of the first piece after BOS. A byte-fallback or byte-level token
  /// may be part of a multi-byte UTF-8 character, so concatenate before
  /// printing. The view stays valid as long as the tokenizer.
  ///
  /// Errors: kInvalidArgument when `id` is not a token of this vocabulary.
  virtual Result<std::string_view> decode(int32_t prev, int32_t id) const = 0;

  /// One past the largest token id.
  virtual int32_t vocab_size() const = 0;
  /// Beginning-of-sequence id, -1 when the format has none.
  virtual int32_t bos_id() const = 0;
  /// End-of-sequence id, -1 when the format has none.
  virtual int32_t eos_id() const = 0;

 protected:
  /// Appends the tokens of `text` to `*ids` (encode() adds BOS/EOS).
  virtual void append_tokens(std::string_view text, std::vector<int32_t>* ids) const = 0;
  /// What the format is, for encode()'s errors ("GPT-2 tokenizer").
  virtual const char* kind() const = 0;
};

/// Appends the decoding of `ids` (each given its predecessor, the first -1)
/// to `*text`. Errors: those of Tokenizer::decode(), naming the position.
Status decode_all(const Tokenizer& tokenizer, Span<const int32_t> ids, std::string* text);

}  // namespace torchlight
