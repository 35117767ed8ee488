// Gpt2BpeTokenizer: GPT-2's byte-level BPE from vocab.json (encoder.json)
// and merges.txt (vocab.bpe), as the original encoder.py runs it.
//
// encode: split out special tokens (optional), pre-tokenize each stretch
// with the GPT-2 pattern (pretokenizer.h), map each piece's bytes to
// single-byte tokens, then repeatedly merge every occurrence of the
// adjacent pair with the lowest merge rank, left to right, until no pair of
// the piece is a merge. decode: a token's raw bytes.
//
// File formats:
//   vocab.json  {"token": id, ...}; tokens spelled in GPT-2's byte alphabet
//               (each byte shown as one printable code point, e.g. "Ġ" for a
//               space), except special tokens, which may be any UTF-8.
//   merges.txt  an optional "#version" first line, then one merge per line:
//               two tokens separated by one space, in rank order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/merge_table.h"
#include "extension/llm/tokenizers/special_tokens.h"
#include "extension/llm/tokenizers/token_table.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

struct Gpt2BpeOptions {
  /// Vocabulary entries that are not BPE results and that encode() matches
  /// verbatim in the text when `allow_special` is set. Each must be in
  /// vocab.json.
  std::vector<std::string> special_tokens = {"<|endoftext|>"};
  /// Which special tokens are bos_id() / eos_id(); "" for none. GPT-2 uses
  /// <|endoftext|> for both.
  std::string bos_token = "<|endoftext|>";
  std::string eos_token = "<|endoftext|>";
  /// When false, special-token text is encoded as ordinary text (what
  /// tiktoken calls encode_ordinary and GPT-2's encoder.py always does).
  bool allow_special = true;
};

class Gpt2BpeTokenizer final : public Tokenizer {
 public:
  /// Loads vocab.json and merges.txt.
  ///
  /// Errors: kNotFound / kAccessFailed for a missing or unreadable file;
  /// kInvalidExternalData naming the file, line and problem for malformed
  /// JSON; a vocab token with a character outside GPT-2's byte alphabet; a
  /// missing single-byte token; a merges line without exactly two tokens, or
  /// whose parts or result are not in the vocabulary, or that repeats an
  /// earlier merge; and vocabulary tokens no merge produces (the merges file
  /// is truncated, or they should be listed as special tokens).
  /// kInvalidArgument when an options token is not in vocab.json.
  static Result<std::unique_ptr<Gpt2BpeTokenizer>> load(const std::string& vocab_json_path,
                                                        const std::string& merges_path,
                                                        const Gpt2BpeOptions& options = {});

  /// As load(), from file contents in memory; the names label errors.
  static Result<std::unique_ptr<Gpt2BpeTokenizer>> load_from_contents(
      std::string_view vocab_json, const char* vocab_name, std::string_view merges,
      const char* merges_name, const Gpt2BpeOptions& options = {});

  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return tokens_.id_limit(); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

  /// Number of merges loaded.
  size_t num_merges() const { return merges_.size(); }

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "GPT-2 tokenizer"; }

  Gpt2BpeTokenizer() = default;
  // Appends the BPE tokens of one pre-token piece.
  void encode_piece(std::string_view piece, std::vector<int32_t>* ids) const;
  void encode_ordinary(std::string_view text, std::vector<int32_t>* ids) const;

  TokenTable tokens_;  // id -> raw bytes
  MergeTable merges_;
  int32_t byte_token_[256] = {};
  SpecialTokens specials_;
  bool allow_special_ = true;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
};

}  // namespace torchlight
