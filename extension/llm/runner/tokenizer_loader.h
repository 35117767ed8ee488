// load_tokenizer: a Tokenizer from what a user passes as --tokenizer, with
// the format told from the name and the content:
//
//   "bytes"                      ByteTokenizer (id = byte, 256 tokens)
//   *tokenizer.json              Hugging Face tokenizer.json (with
//                                tokenizer_config.json beside it, if any)
//   vocab.json / encoder.json    GPT-2 BPE, with merges.txt / vocab.bpe from
//   merges.txt / vocab.bpe       the same directory (either file may be given)
//   lines "<base64> <rank>"      tiktoken; the rank count picks the preset:
//                                r50k_base, cl100k_base, o200k_base, Llama 3
//                                (128,000 ranks + its 256 special tokens),
//                                else the cl100k pattern with no specials
//   protobuf (first byte 0x0A)   SentencePiece BPE .model
//   other binary                 llama2.c tokenizer.bin
//   a directory                  the first found in it of tokenizer.json,
//                                vocab.json +
//                                merges.txt, encoder.json + vocab.bpe,
//                                tokenizer.model, tokenizer.bin
//
// A .model file may be either SentencePiece or tiktoken (Llama 3 ships its
// rank file under that name), so content decides, not the extension.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/tokenizer.h"
#include "runtime/core/result.h"

namespace torchlight {

struct LoadedTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  /// What was detected, for messages: "bytes", "GPT-2 BPE", "tiktoken
  /// (cl100k_base)", "SentencePiece BPE", "llama2.c tokenizer.bin".
  std::string format;
  /// The files read, comma-separated; "" for bytes.
  std::string files;
  /// End-of-turn tokens beyond the tokenizer's EOS (Llama 3's <|eot_id|>).
  std::vector<int32_t> extra_eos_ids;
};

/// Loads the tokenizer `spec` names (see above).
///
/// Errors: kInvalidArgument for an empty spec; kNotFound when the path (or
/// the merges/vocab file a GPT-2 file needs beside it) does not exist, or
/// a directory holds no known tokenizer file; kInvalidExternalData when the
/// file's format is not recognised (the message says what was tried);
/// whatever the format's loader reports for a malformed file.
Result<LoadedTokenizer> load_tokenizer(const std::string& spec);

}  // namespace torchlight
