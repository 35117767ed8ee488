#include "extension/npy/npy_header.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

// A version 1.0 file with `dict` as its header text (a '\n' is added).
std::string npy_v1(const std::string& dict, const std::string& data = "") {
  const std::string text = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(text.size() & 0xff);
  out += static_cast<char>(text.size() >> 8);
  return out + text + data;
}

Result<NpyHeader> parse(const std::string& file) {
  return parse_npy_header({reinterpret_cast<const uint8_t*>(file.data()), file.size()}, "x.npy");
}

std::string dict_with(const std::string& descr, const std::string& fortran,
                      const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

TEST(NpyHeaderTest, ParsesEveryDtype) {
  const struct {
    const char* descr;
    ScalarType type;
  } cases[] = {
      {"'<f2'", ScalarType::kHalf},   {"'<f4'", ScalarType::kFloat},
      {"'<f8'", ScalarType::kDouble}, {"'|i1'", ScalarType::kChar},
      {"'<i2'", ScalarType::kShort},  {"'<i4'", ScalarType::kInt},
      {"'<i8'", ScalarType::kLong},   {"'|u1'", ScalarType::kByte},
      {"'<u2'", ScalarType::kUInt16}, {"'<u4'", ScalarType::kUInt32},
      {"'<u8'", ScalarType::kUInt64}, {"'|b1'", ScalarType::kBool},
      // Other byte-order marks that mean the same bytes here.
      {"'=f4'", ScalarType::kFloat},  {"'<i1'", ScalarType::kChar},
      {"'>u1'", ScalarType::kByte},   {"\"<f8\"", ScalarType::kDouble},
  };
  for (const auto& c : cases) {
    Result<NpyHeader> h = parse(npy_v1(dict_with(c.descr, "False", "(2, 3)")));
    ASSERT_TRUE(h.ok()) << c.descr << ": " << h.status().message();
    EXPECT_EQ(h->type, c.type) << c.descr;
    EXPECT_EQ(h->sizes, (std::vector<SizesType>{2, 3}));
    EXPECT_EQ(h->data_nbytes, 6 * element_size(c.type));
    EXPECT_EQ(h->major_version, 1);
  }
}

TEST(NpyHeaderTest, AcceptsPythonLiteralVariations) {
  const char* dicts[] = {
      // Any key order, no trailing comma.
      "{'shape': (4,), 'fortran_order': False, 'descr': '<i4'}",
      "  {  'descr' :'<i4','fortran_order':False,'shape':( 4 , ) }   ",
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (4L,)}",  // Python 2 long.
      "{'descr': '<i4', 'fortran_order': False, 'shape': (4,),}\t\r",
  };
  for (const char* dict : dicts) {
    Result<NpyHeader> h = parse(npy_v1(dict));
    ASSERT_TRUE(h.ok()) << dict << ": " << h.status().message();
    EXPECT_EQ(h->type, ScalarType::kInt);
    EXPECT_EQ(h->sizes, (std::vector<SizesType>{4}));
  }
  Result<NpyHeader> scalar = parse(npy_v1(dict_with("'<f4'", "False", "()")));
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->sizes.empty());
  EXPECT_EQ(scalar->data_nbytes, 4u);
  Result<NpyHeader> multi = parse(npy_v1(dict_with("'<f4'", "False", "(1, 2, 3,)")));
  ASSERT_TRUE(multi.ok());
  EXPECT_EQ(multi->sizes, (std::vector<SizesType>{1, 2, 3}));
}

TEST(NpyHeaderTest, DataOffsetFollowsTheHeaderLength) {
  const std::string file = npy_v1(dict_with("'<f4'", "False", "(1,)"), "abcd");
  Result<NpyHeader> h = parse(file);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data_offset, file.size() - 4);

  std::string v2("\x93NUMPY\x02\x00", 8);
  const std::string text = dict_with("'<f4'", "False", "(1,)") + "\n";
  v2 += std::string(1, static_cast<char>(text.size())) + std::string(3, '\0') + text;
  Result<NpyHeader> h2 = parse(v2);
  ASSERT_TRUE(h2.ok()) << h2.status().message();
  EXPECT_EQ(h2->major_version, 2);
  EXPECT_EQ(h2->data_offset, v2.size());
}

struct BadHeader {
  std::string file;
  Error code;
  const char* message_part;
};

TEST(NpyHeaderTest, RejectsMalformedAndUnsupportedHeaders) {
  const std::string ok_dict = dict_with("'<f4'", "False", "(2,)");
  const BadHeader cases[] = {
      {"", Error::kInvalidExternalData, "not a .npy file"},
      {"PK\x03\x04", Error::kInvalidExternalData, "not a .npy file"},
      {std::string("\x93NUMPZ\x01\x00\x10\x00", 10), Error::kInvalidExternalData, "magic"},
      {std::string("\x93NUMPY\x01", 7), Error::kInvalidExternalData, "truncated"},
      {std::string("\x93NUMPY\x01\x00\x10", 9), Error::kInvalidExternalData, "truncated"},
      {std::string("\x93NUMPY\x04\x00\x10\x00", 10), Error::kNotSupported, "version 4.0"},
      {std::string("\x93NUMPY\x01\x01\x10\x00", 10), Error::kNotSupported, "version 1.1"},
      {std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{}", Error::kInvalidExternalData,
       "the header needs 265 bytes, only 12"},
      {npy_v1("[1, 2]"), Error::kInvalidExternalData, "not a dict"},
      {npy_v1(""), Error::kInvalidExternalData, "not a dict"},
      {npy_v1("{'descr': '<f4', 'fortran_order': False}"), Error::kInvalidExternalData,
       "no 'shape' key"},
      {npy_v1("{'shape': (2,), 'fortran_order': False}"), Error::kInvalidExternalData,
       "no 'descr' key"},
      {npy_v1("{'descr': '<f4', 'shape': (2,)}"), Error::kInvalidExternalData,
       "no 'fortran_order' key"},
      {npy_v1("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
       Error::kInvalidExternalData, "duplicate key 'descr'"},
      {npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
       Error::kInvalidExternalData, "unexpected key 'x'"},
      {npy_v1(dict_with("'<f4'", "0", "(2,)")), Error::kInvalidExternalData, "True or False"},
      {npy_v1(dict_with("'<f4'", "False", "(3)")), Error::kInvalidExternalData, "not a tuple"},
      {npy_v1(dict_with("'<f4'", "False", "[3]")), Error::kInvalidExternalData,
       "expected a tuple"},
      {npy_v1(dict_with("'<f4'", "False", "(-1,)")), Error::kInvalidExternalData,
       "negative dimension"},
      {npy_v1(dict_with("'<f4'", "False", "(2,,)")), Error::kInvalidExternalData,
       "expected a dimension"},
      {npy_v1(dict_with("'<f4'", "False", "(2 3)")), Error::kInvalidExternalData,
       "expected ',' or ')'"},
      {npy_v1(dict_with("'<f4'", "False", "(2,")), Error::kInvalidExternalData, "dimension"},
      {npy_v1("{'descr': '<f4"), Error::kInvalidExternalData, "unterminated string"},
      {npy_v1("{'de\\x': 1}"), Error::kInvalidExternalData, "escape"},
      {npy_v1("{descr: '<f4'}"), Error::kInvalidExternalData, "expected a key in quotes"},
      {npy_v1("{'descr' '<f4'}"), Error::kInvalidExternalData, "expected ':'"},
      {npy_v1(ok_dict + " extra"), Error::kInvalidExternalData, "unexpected 'e' after the dict"},
      {npy_v1(std::string("{'descr': '<f4',\0 }", 19)), Error::kInvalidExternalData,
       "byte 0x00"},
      {npy_v1(dict_with("'>f4'", "False", "(2,)")), Error::kNotSupported,
       "big-endian dtype '>f4' is not supported; save a.astype('<f4')"},
      {npy_v1(dict_with("'<c8'", "False", "(2,)")), Error::kNotSupported,
       "dtype '<c8' is not supported"},
      {npy_v1(dict_with("'<U10'", "False", "(2,)")), Error::kNotSupported, "'<U10'"},
      {npy_v1(dict_with("'|O'", "False", "(2,)")), Error::kNotSupported, "'|O'"},
      {npy_v1(dict_with("[('a', '<f4')]", "False", "(2,)")), Error::kNotSupported,
       "structured dtypes"},
      {npy_v1(dict_with("'<f4'", "True", "(2, 2)")), Error::kNotSupported, "fortran_order True"},
      {npy_v1(dict_with("'<f4'", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)")),
       Error::kNotSupported, "more than 16 dimensions"},
      {npy_v1(dict_with("'<f4'", "False", "(2147483648,)")), Error::kNotSupported, "INT32_MAX"},
      {npy_v1(dict_with("'<f4'", "False", "(99999999999999999999999999,)")),
       Error::kNotSupported, "INT32_MAX"},
      {npy_v1(dict_with("'<f8'", "False", "(2147483647, 2147483647, 2147483647)")),
       Error::kInvalidExternalData, "overflows"},
      // 2^62 elements fit int64; 2^65 bytes do not fit size_t.
      {npy_v1(dict_with("'<f8'", "False", "(1073741824, 1073741824, 4)")),
       Error::kInvalidExternalData, "overflows"},
  };
  for (const BadHeader& c : cases) {
    Result<NpyHeader> h = parse(c.file);
    ASSERT_FALSE(h.ok()) << "accepted: " << c.file;
    EXPECT_EQ(h.error(), c.code) << h.status().message();
    const std::string message = h.status().message();
    EXPECT_EQ(message.rfind("'x.npy': ", 0), 0u) << message;
    EXPECT_NE(message.find(c.message_part), std::string::npos)
        << "want '" << c.message_part << "' in: " << message;
  }
}

TEST(NpyHeaderTest, HeaderSize) {
  const std::string v1 = npy_v1(dict_with("'<f4'", "False", "(2,)"));
  Result<size_t> size = npy_header_size(
      {reinterpret_cast<const uint8_t*>(v1.data()), kNpyPrefixSize}, "x");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, v1.size());
  // Version 2.0: a 4-byte length, here 0x00010000 (more than a uint16 holds).
  const std::string v2("\x93NUMPY\x02\x00\x00\x00\x01\x00", 12);
  Result<size_t> size2 =
      npy_header_size({reinterpret_cast<const uint8_t*>(v2.data()), v2.size()}, "x");
  ASSERT_TRUE(size2.ok());
  EXPECT_EQ(*size2, 12u + 0x10000u);
  Result<size_t> short2 =
      npy_header_size({reinterpret_cast<const uint8_t*>(v2.data()), 11}, "x");
  ASSERT_FALSE(short2.ok());
  EXPECT_THAT(short2,
              ErrorIs(Error::kInvalidExternalData,
                      "11 bytes, shorter than the 12-byte fixed header"));
}

TEST(NpyHeaderTest, FormatRejectsTypesNumpyLacks) {
  const SizesType sizes[] = {2};
  Result<std::string> bf16 = format_npy_header(ScalarType::kBFloat16, sizes);
  ASSERT_FALSE(bf16.ok());
  EXPECT_THAT(bf16, ErrorIs(Error::kNotSupported, "bfloat16 has no NumPy dtype"));
  for (ScalarType type : {ScalarType::kQInt8, ScalarType::kQUInt4x2, ScalarType::kBits16,
                          ScalarType::kFloat8e4m3fn}) {
    Result<std::string> h = format_npy_header(type, sizes);
    ASSERT_FALSE(h.ok()) << to_string(type);
    EXPECT_THAT(h, ErrorIs(Error::kNotSupported, "has no .npy equivalent"));
  }
}

TEST(NpyHeaderTest, FormatThenParseRoundTrips) {
  const std::vector<std::vector<SizesType>> shapes = {
      {},
      {0},
      {7},
      {2, 3},
      {2147483647, 0},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0}};
  for (const auto& shape : shapes) {
    Result<std::string> header =
        format_npy_header(ScalarType::kShort, {shape.data(), shape.size()});
    ASSERT_TRUE(header.ok());
    EXPECT_EQ(header->size() % 64, 0u);  // numpy aligns the data to 64 bytes.
    EXPECT_EQ(header->back(), '\n');
    Result<NpyHeader> parsed = parse(*header);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->type, ScalarType::kShort);
    EXPECT_EQ(parsed->sizes, shape);
    EXPECT_EQ(parsed->data_offset, header->size());
  }
}

}  // namespace
}  // namespace torchlight
