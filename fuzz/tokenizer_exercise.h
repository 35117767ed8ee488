// What every tokenizer fuzz target does with a tokenizer it loaded: encode
// the text with and without BOS/EOS, decode the ids back, and decode ids at
// and past the vocabulary's edges.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {
namespace fuzz {

inline void exercise_tokenizer(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int32_t> ids;
  for (int flags = 0; flags < 4; ++flags) {
    const bool bos = (flags & 1) != 0;
    const bool eos = (flags & 2) != 0;
    if (!tokenizer.encode(text, bos, eos, &ids).ok()) continue;
    for (int32_t id : ids) {
      // encode() must only produce ids decode() accepts.
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
    }
    std::string decoded;
    (void)decode_all(tokenizer, Span<const int32_t>(ids.data(), ids.size()), &decoded);
  }
  const int32_t edges[] = {-2, -1, 0, 1, tokenizer.vocab_size() - 1, tokenizer.vocab_size(),
                           tokenizer.bos_id(), tokenizer.eos_id(), INT32_MAX, INT32_MIN};
  for (int32_t id : edges) {
    for (int32_t prev : {-1, tokenizer.bos_id(), id}) {
      Result<std::string_view> piece = tokenizer.decode(prev, id);
      if (piece.ok() && !piece.get().empty()) {
        volatile char last = piece.get().back();  // The view must be readable.
        (void)last;
      }
    }
  }
}

}  // namespace fuzz
}  // namespace torchlight
