// Parsing a vocabulary file: one JSON object from token strings to ids,
// as GPT-2's encoder.json / Hugging Face's vocab.json.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"

namespace torchlight {

struct VocabJsonEntry {
  std::string key;  // UTF-8, escapes resolved
  int32_t id;
};

/// The members of the JSON object `json`, in file order. Strict JSON: a
/// single object whose values are integers in [0, 2^31); strings must be
/// valid UTF-8 with no raw control characters; \u escapes may form
/// surrogate pairs. `name` (usually the path) labels errors.
///
/// Errors: kInvalidExternalData naming `name`, the line and column, and what
/// was expected (truncated file, bad escape, non-integer or negative value,
/// duplicate key, trailing data).
Result<std::vector<VocabJsonEntry>> parse_vocab_json(std::string_view json, const char* name);

}  // namespace torchlight
