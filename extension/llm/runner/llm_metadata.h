// LlmMetadata: the optional constant methods an LLM program carries to tell
// a runner what its signature cannot (python/torchlight/llm/metadata.py
// writes them):
//
//   get_max_seq_len() -> Int     positions in the KV cache
//   get_vocab_size()  -> Int     logits per token
//   get_bos_id()      -> Int     token to start a conversation with
//   get_eos_ids()     -> Int...  tokens that end generation (one output each)
//   get_tokenizer()   -> String  tokenizer hint: "bytes", or a file name
//
// and those upstream ExecuTorch's export_llama writes:
//
//   get_max_context_len()    -> Int   positions in the KV cache, when it differs
//                                     from get_max_seq_len() (then the most
//                                     tokens one forward call takes)
//   get_n_layers()           -> Int   decoder layers (informational)
//   use_kv_cache()           -> Bool  false: forward(tokens) re-reads the whole
//                                     sequence on every call
//   use_sdpa_with_kv_cache() -> Bool  informational
//   enable_dynamic_shape()   -> Bool  informational (the runner reads the
//                                     tokens input's dynamism)
//
// Every method is optional; a runner falls back to the tokenizer and to the
// forward method's input/output shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extension/llm/runner/decoder_step.h"
#include "extension/module/module.h"
#include "runtime/core/result.h"

namespace torchlight {

struct LlmMetadata {
  static constexpr const char* kMaxSeqLen = "get_max_seq_len";
  static constexpr const char* kVocabSize = "get_vocab_size";
  static constexpr const char* kBosId = "get_bos_id";
  static constexpr const char* kEosIds = "get_eos_ids";
  static constexpr const char* kTokenizer = "get_tokenizer";
  static constexpr const char* kMaxContextLen = "get_max_context_len";
  static constexpr const char* kNLayers = "get_n_layers";
  static constexpr const char* kUseKvCache = "use_kv_cache";
  static constexpr const char* kUseSdpaWithKvCache = "use_sdpa_with_kv_cache";
  static constexpr const char* kEnableDynamicShape = "enable_dynamic_shape";

  std::optional<int64_t> max_seq_len;
  std::optional<int64_t> vocab_size;
  std::optional<int64_t> bos_id;  // -1: the model takes no BOS
  std::vector<int64_t> eos_ids;   // empty when the method is absent or empty
  std::string tokenizer;          // empty when absent
  std::optional<int64_t> max_context_len;
  std::optional<int64_t> n_layers;
  std::optional<bool> use_kv_cache;
  std::optional<bool> use_sdpa_with_kv_cache;
  std::optional<bool> enable_dynamic_shape;
};

/// Runs whichever metadata methods `module`'s program has.
///
/// Errors: those of loading the program (kNotFound for a missing file, ...);
/// kInvalidProgram naming the method when one takes inputs, returns other
/// than it should (count or type), or returns a value out of range
/// (max_seq_len / max_context_len / vocab_size < 1 or above kMaxLlmContext,
/// an id < -1 or above 2^31); a flag method must return one Bool (an Int 0
/// or 1 is taken too).
Result<LlmMetadata> read_llm_metadata(Module* module);

}  // namespace torchlight
