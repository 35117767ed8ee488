#include "extension/llm/tokenizers/byte_alphabet.h"

#include <cstdio>

#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

constexpr uint32_t kAlphabetLimit = 256 + 68;  // the highest code point + 1

struct ByteAlphabet {
  uint16_t code_point_of[256];
  int16_t byte_of[kAlphabetLimit];  // -1 outside the alphabet
  // Each byte's spelling, pre-encoded: bytes_to_alphabet runs per piece.
  char utf8[256][2];
  uint8_t utf8_size[256];
  ByteAlphabet() {
    for (int16_t& b : byte_of) b = -1;
    uint16_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint16_t cp = printable ? static_cast<uint16_t>(b) : next++;
      code_point_of[b] = cp;
      byte_of[cp] = static_cast<int16_t>(b);
      char buf[4];
      utf8_size[b] = static_cast<uint8_t>(encode_utf8(cp, buf));
      utf8[b][0] = buf[0];
      utf8[b][1] = buf[1];
    }
  }
};

const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

}  // namespace

void bytes_to_alphabet(std::string_view bytes, std::string* out) {
  const ByteAlphabet& a = byte_alphabet();
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out->append(a.utf8[b], a.utf8_size[b]);
  }
}

bool alphabet_to_bytes(std::string_view spelled, std::string* out, uint32_t* bad) {
  const ByteAlphabet& a = byte_alphabet();
  out->clear();
  for (size_t pos = 0; pos < spelled.size();) {
    const Utf8Char u = decode_utf8(spelled, pos);
    if (u.code_point >= kAlphabetLimit || a.byte_of[u.code_point] < 0) {
      *bad = u.code_point;
      return false;
    }
    out->push_back(static_cast<char>(a.byte_of[u.code_point]));
    pos += u.size;
  }
  return true;
}

std::string excerpt(std::string_view s, size_t max_bytes, bool escape_non_ascii) {
  std::string out;
  for (const char c : s.substr(0, max_bytes)) {
    const auto b = static_cast<uint8_t>(c);
    if (b < 0x20 || b == 0x7F || (escape_non_ascii && b > 0x7F)) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02X", b);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

}  // namespace torchlight
