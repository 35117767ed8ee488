// Fuzz target: GPT-2 BPE. Input: one byte choosing the options, vocab.json,
// kPartSeparator, merges.txt, kPartSeparator, text.
#include <cstddef>
#include <cstdint>

#include "extension/llm/tokenizers/gpt2_bpe_tokenizer.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/tokenizer_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  if (size < 1) return 0;
  Gpt2BpeOptions options;
  if ((data[0] & 1) != 0) {  // No special tokens: vocabularies without <|endoftext|>.
    options.special_tokens.clear();
    options.bos_token.clear();
    options.eos_token.clear();
  }
  options.allow_special = (data[0] & 2) == 0;
  const auto parts = fuzz::split_parts(data + 1, size - 1, 3);
  if (parts.size() < 2) return 0;
  const std::string_view text = parts.size() > 2 ? parts[2] : std::string_view("Hello world");
  auto loaded = Gpt2BpeTokenizer::load_from_contents(parts[0], "vocab.json", parts[1],
                                                     "merges.txt", options);
  if (loaded.ok()) fuzz::exercise_tokenizer(*loaded.get(), text);
  return 0;
}
