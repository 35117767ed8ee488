// Pre-tokenization: splitting text into the pieces a byte-level BPE merges
// within, exactly as the reference regular expressions do.
//
// Each pattern is hand-compiled rather than run through a regex engine, so
// there is no dependency, no backtracking blow-up and no allocation. The
// semantics, including the `\s+(?!\S)` look-ahead and ordered alternation,
// are those of the patterns below as Rust's fancy-regex and Python's `regex`
// run them (tiktoken and the original GPT-2 encoder):
//
//   kGpt2   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   kCl100k (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   kO200k  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?|
//           [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?|
//           \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// kGpt2 is also r50k_base/p50k_base; kCl100k is also Llama 3's pattern.
// `\s` is Unicode White_Space. Invalid UTF-8 bytes count as one character of
// class "other" (see unicode_class.h).
#pragma once

#include <cstddef>
#include <string_view>

namespace torchlight {

enum class PretokenizePattern {
  kGpt2,
  kCl100k,
  kO200k,
};

/// The name used in messages: "gpt2", "cl100k", "o200k".
const char* to_string(PretokenizePattern pattern);

/// The pattern whose regular expression is exactly `regex` (the spellings
/// above, as Hugging Face tokenizer.json files write kGpt2 and kCl100k);
/// false for any other expression.
bool pretokenize_pattern_from_regex(std::string_view regex, PretokenizePattern* pattern);

/// Length in bytes of the first piece of `text`: the regex match starting at
/// text[0]. Returns at least 1 for non-empty text (every character matches
/// some alternative) and 0 for empty text. The caller continues at that
/// offset; a look-ahead sees the end of `text` as the end of input.
size_t next_pretoken(PretokenizePattern pattern, std::string_view text);

}  // namespace torchlight
