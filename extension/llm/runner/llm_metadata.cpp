#include "extension/llm/runner/llm_metadata.h"

#include <algorithm>
#include <cinttypes>
#include <utility>

namespace torchlight {
namespace {

constexpr int64_t kMaxId = INT32_MAX;

// The outputs of constant method `name`, which must take no inputs.
Result<std::vector<EValue>> run_constant_method(Module* module, const char* name) {
  TL_ASSIGN_OR_RETURN(MethodMeta meta, module->method_meta(name));
  TL_CHECK_OR_RETURN(meta.num_inputs() == 0, Error::kInvalidProgram,
                     "metadata method '%s' takes %zu inputs; it must take none", name,
                     meta.num_inputs());
  Result<std::vector<EValue>> outputs = module->execute(name);
  if (!outputs.ok()) {
    Status s = outputs.status();
    return s.with_context("running metadata method '%s'", name);
  }
  return outputs;
}

Result<int64_t> one_int(Module* module, const char* name, int64_t min, int64_t max) {
  TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs, run_constant_method(module, name));
  TL_CHECK_OR_RETURN(outputs.size() == 1 && outputs[0].is_int(), Error::kInvalidProgram,
                     "metadata method '%s' must return one Int, but returns %zu value(s)%s%s",
                     name, outputs.size(), outputs.empty() ? "" : ", the first ",
                     outputs.empty() ? "" : to_string(outputs[0].tag()));
  const int64_t value = outputs[0].to_int();
  TL_CHECK_OR_RETURN(value >= min && value <= max, Error::kInvalidProgram,
                     "metadata method '%s' returns %" PRId64 ", outside [%" PRId64 ", %" PRId64 "]",
                     name, value, min, max);
  return value;
}

Result<bool> one_bool(Module* module, const char* name) {
  TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs, run_constant_method(module, name));
  const bool is_flag = outputs.size() == 1 &&
                       (outputs[0].is_bool() ||
                        (outputs[0].is_int() && (outputs[0].to_int() == 0 || outputs[0].to_int() == 1)));
  TL_CHECK_OR_RETURN(is_flag, Error::kInvalidProgram,
                     "metadata method '%s' must return one Bool, but returns %zu value(s)%s%s",
                     name, outputs.size(), outputs.empty() ? "" : ", the first ",
                     outputs.empty() ? "" : to_string(outputs[0].tag()));
  return outputs[0].is_bool() ? outputs[0].to_bool() : outputs[0].to_int() == 1;
}

}  // namespace

Result<LlmMetadata> read_llm_metadata(Module* module) {
  TL_CHECK_OR_RETURN(module != nullptr, Error::kInvalidArgument, "read_llm_metadata: null module");
  TL_ASSIGN_OR_RETURN(std::vector<std::string> names, module->ordered_method_names());
  auto has = [&names](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  LlmMetadata metadata;
  if (has(LlmMetadata::kMaxSeqLen)) {
    TL_ASSIGN_OR_RETURN(metadata.max_seq_len,
                        one_int(module, LlmMetadata::kMaxSeqLen, 1, kMaxLlmContext));
  }
  if (has(LlmMetadata::kVocabSize)) {
    TL_ASSIGN_OR_RETURN(metadata.vocab_size,
                        one_int(module, LlmMetadata::kVocabSize, 1, kMaxLlmContext));
  }
  if (has(LlmMetadata::kBosId)) {
    TL_ASSIGN_OR_RETURN(metadata.bos_id, one_int(module, LlmMetadata::kBosId, -1, kMaxId));
  }
  if (has(LlmMetadata::kEosIds)) {
    TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs,
                        run_constant_method(module, LlmMetadata::kEosIds));
    for (size_t i = 0; i < outputs.size(); ++i) {
      TL_CHECK_OR_RETURN(outputs[i].is_int(), Error::kInvalidProgram,
                         "metadata method '%s' must return Ints, but output %zu is %s",
                         LlmMetadata::kEosIds, i, to_string(outputs[i].tag()));
      const int64_t id = outputs[i].to_int();
      TL_CHECK_OR_RETURN(id >= 0 && id <= kMaxId, Error::kInvalidProgram,
                         "metadata method '%s' returns EOS id %" PRId64 " (output %zu), not a "
                         "token id",
                         LlmMetadata::kEosIds, id, i);
      metadata.eos_ids.push_back(id);
    }
  }
  if (has(LlmMetadata::kMaxContextLen)) {
    TL_ASSIGN_OR_RETURN(metadata.max_context_len,
                        one_int(module, LlmMetadata::kMaxContextLen, 1, kMaxLlmContext));
  }
  if (has(LlmMetadata::kNLayers)) {
    TL_ASSIGN_OR_RETURN(metadata.n_layers, one_int(module, LlmMetadata::kNLayers, 0, kMaxId));
  }
  for (auto [name, field] : {std::pair{LlmMetadata::kUseKvCache, &metadata.use_kv_cache},
                             std::pair{LlmMetadata::kUseSdpaWithKvCache,
                                       &metadata.use_sdpa_with_kv_cache},
                             std::pair{LlmMetadata::kEnableDynamicShape,
                                       &metadata.enable_dynamic_shape}}) {
    if (has(name)) {
      TL_ASSIGN_OR_RETURN(*field, one_bool(module, name));
    }
  }
  if (has(LlmMetadata::kTokenizer)) {
    TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs,
                        run_constant_method(module, LlmMetadata::kTokenizer));
    TL_CHECK_OR_RETURN(outputs.size() == 1 && outputs[0].is_string(), Error::kInvalidProgram,
                       "metadata method '%s' must return one String, but returns %zu value(s)%s%s",
                       LlmMetadata::kTokenizer, outputs.size(),
                       outputs.empty() ? "" : ", the first ",
                       outputs.empty() ? "" : to_string(outputs[0].tag()));
    metadata.tokenizer = std::string(outputs[0].to_string());
  }
  return metadata;
}

}  // namespace torchlight
