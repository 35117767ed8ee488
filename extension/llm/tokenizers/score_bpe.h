// ScoreBpe: the vocabulary and merge loop of llama2.c's tokenizer, which is
// also how SentencePiece runs a BPE model. Shared by the tokenizer.bin and
// the SentencePiece .model loaders.
//
// encode: optionally a dummy " " prefix (SentencePiece's add_dummy_prefix),
// then one symbol per UTF-8 character: the piece spelling that character,
// else its bytes as byte-fallback pieces "<0xHH>" (or the unknown piece when
// there are none); then repeatedly merge the adjacent pair whose
// concatenation is a piece with the highest score (leftmost on ties), until
// no pair concatenates to a piece. Byte-fallback and unknown symbols never
// merge; without byte fallback a run of unknown characters is one unknown
// piece, as in SentencePiece.
//
// Pieces spell spaces as ' ' (SentencePiece's U+2581 is converted by the
// .model loader, and by llama2.c's export script before writing a .bin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extension/llm/tokenizers/token_table.h"

namespace torchlight {

class ScoreBpe {
 public:
  /// Appends piece number size(). `matchable` pieces may be produced from
  /// text; others (control, unknown, unused pieces) only decode. Equal
  /// spellings are allowed: the lowest id wins lookups.
  void add_piece(std::string_view text, float score, bool matchable);

  /// Call once after the last add_piece(): locates the byte-fallback pieces
  /// "<0x00>".."<0xFF>" (used only when `byte_fallback` and all 256 exist;
  /// otherwise unknown characters become `unk_id`, or vanish when it is -1)
  /// and precomputes decodings.
  void finish(int32_t unk_id, bool byte_fallback);

  /// Appends the tokens of `text` (no BOS/EOS) to `*ids`.
  void encode(std::string_view text, bool dummy_prefix, std::vector<int32_t>* ids) const;

  /// The text of piece `id` following `prev`: a byte piece decodes to its
  /// byte, and the leading space of the first piece after `bos_id` is
  /// dropped. `id` must be in [0, size()).
  std::string_view decode(int32_t prev, int32_t id, int32_t bos_id) const;

  int32_t size() const { return static_cast<int32_t>(scores_.size()); }
  /// The matchable piece spelled `text`, or -1.
  int32_t find(std::string_view text) const;
  /// The raw spelling of piece `id` (byte pieces as "<0xHH>").
  std::string_view piece(int32_t id) const { return pieces_.bytes(id); }
  float score(int32_t id) const { return scores_[static_cast<size_t>(id)]; }
  /// Whether every byte has a fallback piece.
  bool has_byte_fallback() const { return byte_fallback_complete_; }

 private:
  TokenTable pieces_;
  std::vector<float> scores_;
  std::vector<uint8_t> matchable_;
  std::vector<int16_t> byte_value_;  // id -> byte for "<0xHH>" pieces, else -1
  int32_t byte_piece_[256] = {};     // byte -> piece id, -1 when absent
  bool byte_fallback_complete_ = false;
  int32_t unk_id_ = -1;
};

}  // namespace torchlight
