// UTF-8 decoding and the Unicode character classes that tokenizer
// pre-splitting patterns (GPT-2, cl100k, o200k) test: letters by case,
// marks, numbers and White_Space.
//
// Invalid UTF-8 never stops a tokenizer: each byte that does not start a
// well-formed sequence decodes as one code point of class kOther, so byte-level
// tokenizers still round-trip arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace torchlight {

/// General category, reduced to what the patterns distinguish.
enum class UnicodeClass : uint8_t {
  kOther = 0,
  kLu,      // uppercase letter
  kLl,      // lowercase letter
  kLt,      // titlecase letter
  kLm,      // modifier letter
  kLo,      // other letter
  kMark,    // Mn, Mc, Me
  kNumber,  // Nd, Nl, No
};

/// Marks a byte that does not start a well-formed UTF-8 sequence.
constexpr uint32_t kInvalidCodePoint = 0xFFFFFFFFu;

/// One decoded character.
struct Utf8Char {
  uint32_t code_point;  // kInvalidCodePoint for an invalid byte
  uint32_t size;        // bytes consumed, 1..4; 0 only at the end of the text
};

/// Decodes the character at `text[pos]`. Rejects overlong forms, surrogates
/// and values past U+10FFFF: those consume one byte as kInvalidCodePoint.
/// At or past the end of `text` returns {kInvalidCodePoint, 0}.
Utf8Char decode_utf8(std::string_view text, size_t pos);

/// The class of `code_point` (kOther for kInvalidCodePoint).
UnicodeClass unicode_class(uint32_t code_point);

/// Unicode White_Space (what `\s` matches in Rust's and Python's regex).
bool is_unicode_whitespace(uint32_t code_point);

/// \p{L}: any letter class.
inline bool is_letter(UnicodeClass c) {
  return c == UnicodeClass::kLu || c == UnicodeClass::kLl || c == UnicodeClass::kLt ||
         c == UnicodeClass::kLm || c == UnicodeClass::kLo;
}

/// Appends the UTF-8 encoding of `code_point` (<= U+10FFFF, not a surrogate)
/// to `out`; returns the number of bytes written (0 when invalid). `out`
/// must have room for 4 bytes.
size_t encode_utf8(uint32_t code_point, char* out);

}  // namespace torchlight
