// Llama2cTokenizer: llama2.c's tokenizer.bin, encoded and decoded as
// llama2.c's run.c does (merge loop in score_bpe.h).
//
// File format (little-endian), written by llama2.c's tokenizer.py from a
// SentencePiece model with U+2581 replaced by ' ', BOS spelled "\n<s>\n"
// and EOS "\n</s>\n":
//   int32 max_token_length
//   vocab_size times: float32 score, int32 length, `length` bytes of piece
// The file does not store vocab_size: pass the model's to check it, or let
// the loader count records to the end of the file.
//
// Differences from run.c, all on input run.c mishandles: a byte that does
// not start valid UTF-8 falls back to its byte piece on its own (run.c may
// lump it with the previous character), the dummy prefix is skipped when
// there is no " " piece (run.c would emit id -1), BOS/EOS do not take part
// in merges, and byte pieces are found by name rather than assumed at 3..258.
#pragma once

#include <memory>
#include <string>

#include "extension/llm/tokenizers/score_bpe.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

struct Llama2cTokenizerOptions {
  /// When > 0, the file must hold exactly this many tokens (the model's
  /// vocab_size); when 0, every record up to the end of the file is read.
  int32_t expected_vocab_size = 0;
  int32_t bos_id = 1;  // -1: none
  int32_t eos_id = 2;  // -1: none
  int32_t unk_id = 0;  // used for unknown characters when there are no byte pieces
  /// Put a " " piece before non-empty text, as SentencePiece's
  /// add_dummy_prefix (llama2.c always does).
  bool add_dummy_prefix = true;
};

class Llama2cTokenizer final : public Tokenizer {
 public:
  /// Largest max_token_length and vocabulary accepted.
  static constexpr int32_t kMaxTokenLength = 1 << 16;
  static constexpr int32_t kMaxVocabSize = 1 << 24;

  /// Loads tokenizer.bin.
  ///
  /// Errors: kNotFound / kAccessFailed for a missing or unreadable file;
  /// kInvalidExternalData naming the file, the token and the byte offset
  /// when the file is shorter than its header, a record is cut off, a length
  /// is negative or above max_token_length, a score is NaN, max_token_length
  /// is out of range, the token count differs from expected_vocab_size
  /// (missing records or trailing bytes), or there are no tokens.
  /// kInvalidArgument when bos_id/eos_id/unk_id are outside the vocabulary.
  static Result<std::unique_ptr<Llama2cTokenizer>> load(
      const std::string& path, const Llama2cTokenizerOptions& options = {});

  /// As load(), from the file's bytes; `name` labels errors.
  static Result<std::unique_ptr<Llama2cTokenizer>> load_from_contents(
      std::string_view contents, const char* name, const Llama2cTokenizerOptions& options = {});

  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return model_.size(); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

  int32_t max_token_length() const { return max_token_length_; }
  /// Score of piece `id`, which must be in [0, vocab_size()).
  float score(int32_t id) const { return model_.score(id); }

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "llama2.c tokenizer"; }

  Llama2cTokenizer() = default;

  ScoreBpe model_;
  int32_t max_token_length_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  bool add_dummy_prefix_ = true;
};

}  // namespace torchlight
