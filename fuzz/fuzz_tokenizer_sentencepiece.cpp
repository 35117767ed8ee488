// Fuzz target: SentencePiece .model (protobuf). Input: the file,
// kPartSeparator, text.
#include <cstddef>
#include <cstdint>

#include "extension/llm/tokenizers/sentencepiece_tokenizer.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/tokenizer_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  const auto parts = fuzz::split_parts(data, size, 2);
  const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view("Hello world");
  auto loaded = SentencePieceTokenizer::load_from_contents(parts[0], "fuzz_tokenizer.model");
  if (loaded.ok()) fuzz::exercise_tokenizer(*loaded.get(), text);
  return 0;
}
