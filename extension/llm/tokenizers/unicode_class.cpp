#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

struct ClassRange {
  uint32_t first;
  uint32_t last;
  UnicodeClass cls;
};

constexpr ClassRange kRanges[] = {
#include "extension/llm/tokenizers/unicode_class_table.inc"
};
constexpr size_t kNumRanges = sizeof(kRanges) / sizeof(kRanges[0]);

// ASCII is most of most text: answer it from a table built once.
struct AsciiTable {
  UnicodeClass cls[128];
  constexpr AsciiTable() : cls() {
    for (uint32_t c = 0; c < 128; ++c) {
      cls[c] = (c >= '0' && c <= '9')   ? UnicodeClass::kNumber
               : (c >= 'A' && c <= 'Z') ? UnicodeClass::kLu
               : (c >= 'a' && c <= 'z') ? UnicodeClass::kLl
                                        : UnicodeClass::kOther;
    }
  }
};
constexpr AsciiTable kAscii;

}  // namespace

Utf8Char decode_utf8(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {kInvalidCodePoint, 0};
  const auto* s = reinterpret_cast<const uint8_t*>(text.data()) + pos;
  const size_t avail = text.size() - pos;
  const uint8_t b0 = s[0];
  if (b0 < 0x80) return {b0, 1};
  uint32_t need;
  uint32_t cp;
  uint32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1, cp = b0 & 0x1Fu, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2, cp = b0 & 0x0Fu, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3, cp = b0 & 0x07u, min = 0x10000;
  } else {
    return {kInvalidCodePoint, 1};
  }
  if (avail <= need) return {kInvalidCodePoint, 1};
  for (uint32_t i = 1; i <= need; ++i) {
    if ((s[i] & 0xC0u) != 0x80u) return {kInvalidCodePoint, 1};
    cp = (cp << 6) | (s[i] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return {kInvalidCodePoint, 1};
  }
  return {cp, need + 1};
}

UnicodeClass unicode_class(uint32_t code_point) {
  if (code_point < 128) return kAscii.cls[code_point];
  if (code_point == kInvalidCodePoint) return UnicodeClass::kOther;
  // Binary search for the last range starting at or before code_point.
  size_t lo = 0;
  size_t hi = kNumRanges;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kRanges[mid].first <= code_point) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return UnicodeClass::kOther;
  const ClassRange& r = kRanges[lo - 1];
  return code_point <= r.last ? r.cls : UnicodeClass::kOther;
}

bool is_unicode_whitespace(uint32_t c) {
  // The White_Space property: stable since Unicode 6.3.
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

size_t encode_utf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  if (cp <= 0x10FFFF) {
    out[0] = static_cast<char>(0xF0 | (cp >> 18));
    out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[3] = static_cast<char>(0x80 | (cp & 0x3F));
    return 4;
  }
  return 0;
}

}  // namespace torchlight
