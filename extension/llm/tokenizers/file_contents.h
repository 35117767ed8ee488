// Reading a whole tokenizer file into memory.
#pragma once

#include <string>

#include "runtime/core/result.h"

namespace torchlight {

/// The bytes of the file at `path`, at most `max_bytes` of them.
///
/// Errors: kNotFound when the file does not exist; kAccessFailed when it
/// cannot be opened or read (the message names the path and the OS error);
/// kInvalidExternalData when it is larger than `max_bytes` or not a regular
/// file.
Result<std::string> read_file_contents(const std::string& path, size_t max_bytes);

/// Default cap for tokenizer files: far above real ones (o200k's rank file
/// is 3.6 MB), low enough that a wrong path to a model file fails fast.
constexpr size_t kMaxTokenizerFileBytes = size_t{512} << 20;

}  // namespace torchlight
