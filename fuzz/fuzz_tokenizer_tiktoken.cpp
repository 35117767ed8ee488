// Fuzz target: tiktoken rank files. Input: one byte choosing the options
// (pattern, specials), the file, kPartSeparator, text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "extension/llm/tokenizers/tiktoken_tokenizer.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/tokenizer_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  if (size < 1) return 0;
  TiktokenOptions options;
  switch (data[0] % 4) {
    case 0: break;  // cl100k pattern, no specials.
    case 1: options = TiktokenOptions::r50k_base(); break;
    case 2: options = TiktokenOptions::cl100k_base(); break;
    case 3: options = TiktokenOptions::o200k_base(); break;
  }
  options.expected_ranks = 0;  // Small fuzzed files, not the published ones.
  options.allow_special = (data[0] & 4) == 0;
  const auto parts = fuzz::split_parts(data + 1, size - 1, 2);
  const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view("Hello world");
  auto loaded = TiktokenTokenizer::load_from_contents(parts[0], "fuzz.tiktoken", options);
  if (loaded.ok()) fuzz::exercise_tokenizer(*loaded.get(), text);
  return 0;
}
