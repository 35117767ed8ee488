// TiktokenTokenizer: byte-level BPE from a tiktoken rank file (.tiktoken:
// r50k_base, cl100k_base, o200k_base, Llama 3's tokenizer.model), as
// tiktoken's core runs it.
//
// encode: split out special tokens (optional), pre-tokenize each stretch
// with the encoding's pattern (pretokenizer.h); a piece that is itself a
// token is emitted as is, else its bytes are merged by repeatedly joining
// the adjacent pair whose concatenation has the lowest rank (leftmost on
// ties). decode: a token's raw bytes.
//
// File format: one token per line, "<base64 of the token bytes> <rank>\n";
// ranks are the token ids. Special tokens are not in the file; they come
// from the options (e.g. cl100k's "<|endoftext|>" = 100257).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "extension/llm/tokenizers/pretokenizer.h"
#include "extension/llm/tokenizers/special_tokens.h"
#include "extension/llm/tokenizers/token_table.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

struct TiktokenOptions {
  PretokenizePattern pattern = PretokenizePattern::kCl100k;
  /// Special tokens and their ids; ids must not collide with ranks.
  std::vector<std::pair<std::string, int32_t>> special_tokens;
  /// Which special tokens are bos_id() / eos_id(); "" for none.
  std::string bos_token;
  std::string eos_token;
  /// When false, special-token text is encoded as ordinary text.
  bool allow_special = true;
  /// When non-zero, the file must hold exactly this many ranks (tiktoken's
  /// explicit_n_vocab check): catches a file cut at a line boundary.
  size_t expected_ranks = 0;

  /// The published encodings: pattern, special tokens and rank count.
  static TiktokenOptions r50k_base();
  static TiktokenOptions cl100k_base();
  static TiktokenOptions o200k_base();
};

class TiktokenTokenizer final : public Tokenizer {
 public:
  /// Loads a .tiktoken rank file.
  ///
  /// Errors: kNotFound / kAccessFailed for a missing or unreadable file;
  /// kInvalidExternalData naming the file and line for a line that is not
  /// "<base64> <rank>", bad base64, a rank out of range, a repeated rank or
  /// token, a last line without its newline (truncated), a rank count other
  /// than options.expected_ranks, or a missing single-byte token.
  /// kInvalidArgument for options whose special tokens collide with ranks or
  /// each other, or whose BOS/EOS name no special token.
  static Result<std::unique_ptr<TiktokenTokenizer>> load(const std::string& path,
                                                         const TiktokenOptions& options);

  /// As load(), from the file's contents; `name` labels errors.
  static Result<std::unique_ptr<TiktokenTokenizer>> load_from_contents(
      std::string_view contents, const char* name, const TiktokenOptions& options);

  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

  /// Number of ranks loaded from the file (special tokens excluded).
  size_t num_ranks() const { return num_ranks_; }

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "tiktoken encoding"; }

  TiktokenTokenizer() = default;
  void encode_ordinary(std::string_view text, std::vector<int32_t>* ids) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>* ids) const;

  TokenTable ranks_;  // rank -> token bytes, from the file
  SpecialTokens specials_;
  int32_t vocab_size_ = 0;
  PretokenizePattern pattern_ = PretokenizePattern::kCl100k;
  bool allow_special_ = true;
  size_t num_ranks_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
};

}  // namespace torchlight
