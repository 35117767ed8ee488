// Parsing of the fixed prefix of a .pte: the identifier at bytes 4..7 and the
// optional extended header at byte 8. Internal to the executor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/executor/program.h"

namespace torchlight {

/// Bytes to read before the header can be parsed.
constexpr size_t kProgramPrefixSize = 64;

/// Checks the identifier and parses the extended header from the first bytes
/// of a file of `file_size` bytes. `prefix` holds min(file_size, 64) bytes.
/// `name` is used in messages. Errors: kInvalidProgram for a file that is not
/// a .pte or whose header is inconsistent with the file size, kNotSupported
/// for another format or header version.
Status parse_program_header(Span<const uint8_t> prefix, uint64_t file_size, const char* name,
                            ProgramHeader* header);

}  // namespace torchlight
