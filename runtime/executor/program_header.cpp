#include "runtime/executor/program_header.h"

#include <cstdio>
#include <cstring>

#include "runtime/core/result.h"

namespace torchlight {
namespace {

constexpr size_t kIdentifierOffset = 4;
constexpr size_t kHeaderOffset = 8;
// Release 0.5 files end the header after segment_base_offset (24 bytes);
// later ones add segment_data_size (32).
constexpr uint32_t kMinHeaderLength = 24;
constexpr uint32_t kHeaderLengthWithDataSize = 32;

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint64_t read_u64(const uint8_t* p) {
  return static_cast<uint64_t>(read_u32(p)) | static_cast<uint64_t>(read_u32(p + 4)) << 32;
}

bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

// Four bytes as printable text for messages ("ET12", or "\x00\x01..").
const char* printable(const uint8_t* p, char out[20]) {
  size_t used = 0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\') {
      out[used++] = static_cast<char>(p[i]);
    } else {
      used += static_cast<size_t>(snprintf(out + used, 5, "\\x%02x", p[i]));
    }
  }
  out[used] = '\0';
  return out;
}

}  // namespace

Status parse_program_header(Span<const uint8_t> prefix, uint64_t file_size, const char* name,
                            ProgramHeader* header) {
  *header = ProgramHeader();
  TL_CHECK_OR_RETURN(file_size >= kHeaderOffset && prefix.size() >= kHeaderOffset,
                     Error::kInvalidProgram,
                     "'%s' is %llu bytes, too short to be a .pte program (at least %zu needed)", name,
                     static_cast<unsigned long long>(file_size), kHeaderOffset);
  const uint8_t* id = prefix.data() + kIdentifierOffset;
  char text[20];
  TL_CHECK_OR_RETURN(id[0] == 'E' && id[1] == 'T' && is_digit(id[2]) && is_digit(id[3]),
                     Error::kInvalidProgram,
                     "'%s' is not a .pte program: file identifier is \"%s\", expected \"ET12\"",
                     name, printable(id, text));
  TL_CHECK_OR_RETURN(id[2] == '1' && id[3] == '2', Error::kNotSupported,
                     "'%s' is .pte format version %s; this runtime reads ET12", name,
                     printable(id, text));

  // The extended header is recognised by its magic; without it, the whole
  // file is flatbuffer data.
  if (prefix.size() < kHeaderOffset + 4) return Error::kOk;
  const uint8_t* magic = prefix.data() + kHeaderOffset;
  if (!(magic[0] == 'e' && magic[1] == 'h' && is_digit(magic[2]) && is_digit(magic[3]))) {
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(magic[2] == '0' && magic[3] == '0', Error::kNotSupported,
                     "'%s' has extended header version %s; this runtime reads eh00", name,
                     printable(magic, text));
  TL_CHECK_OR_RETURN(prefix.size() >= kHeaderOffset + kMinHeaderLength, Error::kInvalidProgram,
                     "'%s' is truncated inside its extended header (%llu bytes)", name,
                     static_cast<unsigned long long>(file_size));
  const uint8_t* h = prefix.data() + kHeaderOffset;
  header->present = true;
  header->length = read_u32(h + 4);
  header->program_size = read_u64(h + 8);
  header->segment_base_offset = read_u64(h + 16);
  header->segment_data_size =
      header->length >= kHeaderLengthWithDataSize ? read_u64(h + 24) : 0;

  const auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  TL_CHECK_OR_RETURN(header->length >= kMinHeaderLength &&
                         header->length <= file_size - kHeaderOffset,
                     Error::kInvalidProgram,
                     "'%s': extended header length %u is invalid (at least %u, and within the "
                     "%llu-byte file)",
                     name, header->length, kMinHeaderLength, ull(file_size));
  TL_CHECK_OR_RETURN(header->program_size > kHeaderOffset + header->length &&
                         header->program_size <= file_size,
                     Error::kInvalidProgram,
                     "'%s': extended header says the program is %llu bytes, but the file is %llu "
                     "bytes (the program must fit in the file and follow the header)",
                     name, ull(header->program_size), ull(file_size));
  if (header->segment_base_offset != 0) {
    TL_CHECK_OR_RETURN(header->segment_base_offset >= header->program_size &&
                           header->segment_base_offset <= file_size,
                       Error::kInvalidProgram,
                       "'%s': segment base offset %llu lies outside [%llu, %llu] (program end, "
                       "file end)",
                       name, ull(header->segment_base_offset), ull(header->program_size),
                       ull(file_size));
    TL_CHECK_OR_RETURN(header->segment_data_size <= file_size - header->segment_base_offset,
                       Error::kInvalidProgram,
                       "'%s': %llu bytes of segment data at offset %llu run past the end of the "
                       "%llu-byte file",
                       name, ull(header->segment_data_size), ull(header->segment_base_offset),
                       ull(file_size));
  }
  return Error::kOk;
}

}  // namespace torchlight
