// SentencePieceTokenizer: a SentencePiece BPE model file (.model, the
// ModelProto protobuf; e.g. Llama 2's tokenizer.model) read directly, with
// no protobuf or sentencepiece library. Encoding is SentencePiece's BPE,
// which is llama2.c's merge loop (score_bpe.h).
//
// Supported: model_type BPE; the identity normalizer (no precompiled
// charsmap), with add_dummy_prefix, remove_extra_whitespaces (only ' ' is
// whitespace under identity) and escape_whitespaces; byte_fallback; piece
// types NORMAL, UNKNOWN, CONTROL, UNUSED and BYTE. Refused with
// kNotSupported: unigram/word/char models, nmt_nfkc and other precompiled
// normalizers, user-defined symbols, treat_whitespace_as_suffix.
//
// Decoding follows SentencePiece: control and unused pieces decode to "",
// the unknown piece to " \u2047 ", a byte piece to its byte, and the first
// piece of the text (prev -1 or BOS) loses the dummy-prefix space.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/score_bpe.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  /// Loads a .model file.
  ///
  /// Errors: kNotFound / kAccessFailed for a missing or unreadable file;
  /// kInvalidExternalData naming the file, the field and the byte offset for
  /// malformed protobuf (truncated varint or field, bad wire type), an empty
  /// piece, a NaN score, an unknown piece type, no pieces, or special ids
  /// outside the vocabulary; kNotSupported for the features listed above.
  static Result<std::unique_ptr<SentencePieceTokenizer>> load(const std::string& path);

  /// As load(), from the file's bytes; `name` labels errors.
  static Result<std::unique_ptr<SentencePieceTokenizer>> load_from_contents(
      std::string_view contents, const char* name);

  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return model_.size(); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  int32_t unk_id() const { return unk_id_; }

  /// Piece `id` as SentencePiece spells it, with ' ' for U+2581; `id` must
  /// be in [0, vocab_size()).
  std::string_view piece(int32_t id) const { return model_.piece(id); }
  float score(int32_t id) const { return model_.score(id); }

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "SentencePiece model"; }

  SentencePieceTokenizer() = default;

  ScoreBpe model_;
  std::vector<uint8_t> type_;  // per piece: the ModelProto piece type
  int32_t unk_id_ = 0;
  int32_t bos_id_ = 1;
  int32_t eos_id_ = 2;
  bool add_dummy_prefix_ = true;
  bool remove_extra_whitespaces_ = true;
};

}  // namespace torchlight
