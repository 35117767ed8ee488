#include "extension/llm/tokenizers/unicode_class.h"

#include <gtest/gtest.h>

#include <string>

namespace torchlight {
namespace {

TEST(Utf8, DecodesEachLength) {
  const std::string s = "a\xC3\xA9\xE4\xBD\xA0\xF0\x9F\x98\x80";  // a é 你 😀
  EXPECT_EQ(decode_utf8(s, 0).code_point, 'a');
  EXPECT_EQ(decode_utf8(s, 0).size, 1u);
  EXPECT_EQ(decode_utf8(s, 1).code_point, 0xE9u);
  EXPECT_EQ(decode_utf8(s, 1).size, 2u);
  EXPECT_EQ(decode_utf8(s, 3).code_point, 0x4F60u);
  EXPECT_EQ(decode_utf8(s, 3).size, 3u);
  EXPECT_EQ(decode_utf8(s, 6).code_point, 0x1F600u);
  EXPECT_EQ(decode_utf8(s, 6).size, 4u);
  EXPECT_EQ(decode_utf8(s, 10).size, 0u);
}

TEST(Utf8, InvalidBytesDecodeOneAtATime) {
  const char* bad[] = {
      "\x80",              // lone continuation
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong
      "\xED\xA0\x80",      // surrogate U+D800
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xF8\x88\x80\x80",  // 5-byte lead
      "\xE4\xBD",          // truncated
      "\xC3(",             // missing continuation
  };
  for (const char* b : bad) {
    const Utf8Char u = decode_utf8(b, 0);
    EXPECT_EQ(u.code_point, kInvalidCodePoint) << b;
    EXPECT_EQ(u.size, 1u) << b;
  }
}

TEST(Utf8, EncodeRoundTripsEveryScalarValue) {
  char buf[4];
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    const size_t n = encode_utf8(cp, buf);
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      ASSERT_EQ(n, 0u);
      continue;
    }
    const Utf8Char u = decode_utf8(std::string_view(buf, n), 0);
    ASSERT_EQ(u.code_point, cp);
    ASSERT_EQ(u.size, n);
  }
  EXPECT_EQ(encode_utf8(0x110000, buf), 0u);
}

TEST(UnicodeClass, Categories) {
  EXPECT_EQ(unicode_class('A'), UnicodeClass::kLu);
  EXPECT_EQ(unicode_class('z'), UnicodeClass::kLl);
  EXPECT_EQ(unicode_class('5'), UnicodeClass::kNumber);
  EXPECT_EQ(unicode_class(' '), UnicodeClass::kOther);
  EXPECT_EQ(unicode_class('\''), UnicodeClass::kOther);
  EXPECT_EQ(unicode_class(0xC9), UnicodeClass::kLu);     // É
  EXPECT_EQ(unicode_class(0xDF), UnicodeClass::kLl);     // ß
  EXPECT_EQ(unicode_class(0x1C5), UnicodeClass::kLt);    // ǅ
  EXPECT_EQ(unicode_class(0x2B0), UnicodeClass::kLm);    // ʰ
  EXPECT_EQ(unicode_class(0x4F60), UnicodeClass::kLo);   // 你
  EXPECT_EQ(unicode_class(0xAC00), UnicodeClass::kLo);   // 가
  EXPECT_EQ(unicode_class(0x301), UnicodeClass::kMark);  // combining acute
  EXPECT_EQ(unicode_class(0x663), UnicodeClass::kNumber);  // Arabic-Indic 3
  EXPECT_EQ(unicode_class(0xBD), UnicodeClass::kNumber);   // ½
  EXPECT_EQ(unicode_class(0x2167), UnicodeClass::kNumber); // Roman numeral (Nl)
  EXPECT_EQ(unicode_class(0x1F600), UnicodeClass::kOther);  // emoji
  EXPECT_EQ(unicode_class(0x20000), UnicodeClass::kLo);    // CJK ext. B
  EXPECT_EQ(unicode_class(0x10FFFF), UnicodeClass::kOther);
  EXPECT_EQ(unicode_class(kInvalidCodePoint), UnicodeClass::kOther);
}

TEST(UnicodeClass, WhiteSpace) {
  for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u,
                     0x200Au, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
    EXPECT_TRUE(is_unicode_whitespace(c)) << std::hex << c;
  }
  for (uint32_t c : {0x08u, 0x1Cu, 0x1Fu, 0x21u, 0x200Bu, 0xFEFFu, 0x180Eu, kInvalidCodePoint}) {
    EXPECT_FALSE(is_unicode_whitespace(c)) << std::hex << c;
  }
}

}  // namespace
}  // namespace torchlight
