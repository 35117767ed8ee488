// Fuzz target: Hugging Face tokenizer.json. Input: one byte choosing the
// options, tokenizer.json, kPartSeparator, tokenizer_config.json (may be
// empty), kPartSeparator, text.
#include <cstddef>
#include <cstdint>

#include "extension/llm/tokenizers/hf_tokenizer.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/tokenizer_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  if (size < 1) return 0;
  HfTokenizerOptions options;
  options.allow_special = (data[0] & 1) == 0;
  const auto parts = fuzz::split_parts(data + 1, size - 1, 3);
  if (parts.empty()) return 0;
  const std::string_view config = parts.size() > 1 ? parts[1] : std::string_view();
  const std::string_view text = parts.size() > 2 ? parts[2] : std::string_view("Hello world");
  auto loaded = HfTokenizer::load_from_contents(parts[0], "tokenizer.json", config, options);
  if (loaded.ok()) fuzz::exercise_tokenizer(*loaded.get(), text);
  return 0;
}
