// Fuzz target: tiktoken rank files. Input: one byte choosing the options
// (pattern, specials), the file, kPartSeparator, text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "extension/llm/tokenizers/tiktoken_tokenizer.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/tokenizer_exercise.h"

namespace {

// Known defect (fuzz/crashes/README.md, tokenizer_tiktoken): one line with a
// rank near TokenTable::kMaxId makes the loader allocate a table of that
// many entries, over a second for a 600-byte file. Until its fix is merged
// such inputs are skipped so the fuzzer gets past them (unless
// TORCHLIGHT_FUZZ_KNOWN is set, as in known_defects.h); delete this then.
bool has_rank_above(std::string_view file, int64_t limit) {
  int64_t rank = 0;
  bool in_rank = false;
  for (char c : file) {
    if (c == ' ') {
      in_rank = true;
      rank = 0;
    } else if (c == '\n') {
      in_rank = false;
    } else if (in_rank && c >= '0' && c <= '9') {
      rank = rank * 10 + (c - '0');
      if (rank > limit) return true;
    }
  }
  return false;
}

}  // namespace

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
  if (std::getenv("TORCHLIGHT_FUZZ_KNOWN") == nullptr && has_rank_above(parts[0], 1 << 16)) {
    return 0;
  }
  auto loaded = TiktokenTokenizer::load_from_contents(parts[0], "fuzz.tiktoken", options);
  if (loaded.ok()) fuzz::exercise_tokenizer(*loaded.get(), text);
  return 0;
}
