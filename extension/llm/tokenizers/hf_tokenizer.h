// HfTokenizer: Hugging Face's tokenizer.json (the `tokenizers` library's
// serialized pipeline) for BPE models, as Llama 2, Mistral and TinyLlama
// (SentencePiece-style: "▁" for spaces, byte fallback) and GPT-2, Llama 3
// and SmolLM (byte-level) publish them.
//
// encode: added tokens are matched verbatim in the text first (longest at
// the leftmost position); each stretch between them is normalized,
// pre-tokenized into pieces, and each piece is split into characters and
// merged pair by pair, lowest merge rank first (leftmost on ties), as the
// `tokenizers` library's BPE model does.
//
// What load() accepts; anything else is kNotSupported naming the component
// and where it sits in the file, so a tokenizer is never silently wrong:
//   normalizer      null, Sequence, Prepend, Replace (String pattern)
//   pre_tokenizer   null, Sequence, ByteLevel, Metaspace, Split (behavior
//                   Isolated; a String pattern, or the GPT-2 or the
//                   cl100k / Llama 3 regex, which pretokenizer.h implements)
//   model           BPE: vocab, merges ("a b" strings or ["a", "b"] pairs),
//                   byte_fallback, unk_token, fuse_unk, ignore_merges
//   decoder         null, ByteLevel, Metaspace, Sequence of Replace,
//                   ByteFallback, Fuse, Strip (of leading characters)
//   added_tokens    id, content, special (single_word / lstrip / rstrip
//                   must be false)
//   post_processor  not applied: encode()'s bos/eos flags add BOS/EOS.
// BOS and EOS come from the options, else from tokenizer_config.json's
// bos_token / eos_token, else BOS is the first special token of a
// TemplateProcessing post-processor.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extension/llm/tokenizers/merge_table.h"
#include "extension/llm/tokenizers/pretokenizer.h"
#include "extension/llm/tokenizers/special_tokens.h"
#include "extension/llm/tokenizers/token_table.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

struct HfTokenizerOptions {
  /// Content of the BOS / EOS added token; "" to take it from the config.
  std::string bos_token;
  std::string eos_token;
  /// When false, special added tokens in the text are encoded as ordinary
  /// text (non-special added tokens are always matched, as in `tokenizers`).
  bool allow_special = true;
};

class HfTokenizer final : public Tokenizer {
 public:
  /// Loads tokenizer.json, and tokenizer_config.json from the same
  /// directory when it exists (for bos_token / eos_token).
  ///
  /// Errors: kNotFound / kAccessFailed for a missing or unreadable file;
  /// kInvalidExternalData naming the file and the JSON path for malformed
  /// JSON, a missing or mistyped field, a merge whose parts or result are
  /// not in the vocabulary, duplicate ids; kNotSupported for a component
  /// outside the list above; kInvalidArgument when an options token is not
  /// an added token or in the vocabulary.
  static Result<std::unique_ptr<HfTokenizer>> load(const std::string& tokenizer_json_path,
                                                   const HfTokenizerOptions& options = {});

  /// As load(), from contents in memory; `config_json` may be empty. The
  /// name labels errors.
  static Result<std::unique_ptr<HfTokenizer>> load_from_contents(
      std::string_view tokenizer_json, const char* name, std::string_view config_json,
      const HfTokenizerOptions& options = {});

  Result<std::string_view> decode(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return decoded_.id_limit(); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

  /// Number of merges loaded.
  size_t num_merges() const { return merges_.size(); }

  // The pipeline load() builds; public for the loader in hf_tokenizer_json.cpp.
  struct NormalizeStep {
    enum class Kind { kPrepend, kReplace } kind;
    std::string from;  // kReplace: the text replaced
    std::string to;    // kPrepend: the prefix; kReplace: the replacement
  };
  struct PreTokenizeStep {
    enum class Kind { kSplitPattern, kSplitString, kByteLevel, kMetaspace } kind;
    PretokenizePattern pattern = PretokenizePattern::kGpt2;  // kSplitPattern
    std::string text;             // kSplitString: the separator; kMetaspace: the replacement
    bool add_prefix_space = false;  // kByteLevel
    bool use_regex = false;         // kByteLevel: split with the GPT-2 regex
    enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kNever;  // kMetaspace
    bool split = false;             // kMetaspace: a piece starts at every replacement
  };
  struct Pipeline {
    std::vector<NormalizeStep> normalizers;
    std::vector<PreTokenizeStep> pre_tokenizers;
    bool byte_fallback = false;
    bool fuse_unk = false;
    bool ignore_merges = false;
    int32_t unk_id = -1;
    // Decoding, applied to each token's spelling at load.
    bool decode_byte_level = false;  // spelling in GPT-2's byte alphabet
    bool decode_byte_fallback = false;  // "<0xHH>" is byte HH
    std::vector<std::pair<std::string, std::string>> decode_replacements;
    std::string strip_at_start;  // removed from the start of the first token's text (prev -1)
  };

 private:
  void append_tokens(std::string_view text, std::vector<int32_t>* ids) const override;
  const char* kind() const override { return "tokenizer.json"; }

  friend class HfTokenizerBuilder;

  HfTokenizer() = default;
  void encode_stretch(std::string_view text, bool at_start, std::vector<int32_t>* ids) const;
  void pre_tokenize(std::string text, bool at_start, std::vector<std::string>* pieces) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>* ids) const;

  Pipeline pipeline_;
  TokenTable vocab_;    // model vocabulary: id -> spelling ("▁the", "Ġthe")
  TokenTable decoded_;  // every id (added tokens too) -> the bytes it decodes to
  MergeTable merges_;
  int32_t byte_piece_[256] = {};  // "<0xHH>" ids for byte fallback, -1 when absent
  SpecialTokens added_;           // every added token
  SpecialTokens added_plain_;     // the added tokens that are not special
  bool allow_special_ = true;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
};

}  // namespace torchlight
