#include "runtime/executor/program_header.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/pte_builder.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

std::vector<uint8_t> header_bytes(uint32_t length, uint64_t program_size, uint64_t base,
                                  uint64_t data_size) {
  std::vector<uint8_t> b(64, 0);
  std::memcpy(b.data() + 4, "ET12", 4);
  std::memcpy(b.data() + 8, "eh00", 4);
  testing::put_u32(b, 12, length);
  testing::put_u64(b, 16, program_size);
  testing::put_u64(b, 24, base);
  testing::put_u64(b, 32, data_size);
  return b;
}

Status parse(const std::vector<uint8_t>& b, uint64_t file_size, ProgramHeader* h) {
  return parse_program_header({b.data(), b.size()}, file_size, "x.pte", h);
}

TEST(ProgramHeaderTest, ParsesAllFields) {
  ProgramHeader h;
  auto b = header_bytes(32, 200, 256, 100);
  ASSERT_TRUE(parse(b, 356, &h).ok());
  EXPECT_TRUE(h.present);
  EXPECT_EQ(h.length, 32u);
  EXPECT_EQ(h.program_size, 200u);
  EXPECT_EQ(h.segment_base_offset, 256u);
  EXPECT_EQ(h.segment_data_size, 100u);
}

TEST(ProgramHeaderTest, ReleaseZeroFiveHeaderHasNoSegmentDataSize) {
  // A 24-byte header ends after segment_base_offset; bytes 32..39 already
  // belong to the flatbuffer and must not be read as a size.
  ProgramHeader h;
  auto b = header_bytes(24, 200, 256, UINT64_MAX);
  ASSERT_TRUE(parse(b, 300, &h).ok());
  EXPECT_TRUE(h.present);
  EXPECT_EQ(h.length, 24u);
  EXPECT_EQ(h.program_size, 200u);
  EXPECT_EQ(h.segment_base_offset, 256u);
  EXPECT_FALSE(h.has_segment_data_size);
  EXPECT_EQ(h.segment_data_size, 0u);
}

TEST(ProgramHeaderTest, ThirtyTwoByteHeaderRecordsSegmentDataSize) {
  ProgramHeader h;
  ASSERT_TRUE(parse(header_bytes(32, 200, 256, 0), 300, &h).ok());
  EXPECT_TRUE(h.has_segment_data_size);
  EXPECT_EQ(h.segment_data_size, 0u);
}

TEST(ProgramHeaderTest, TwentyFourByteHeaderStillChecksProgramAndBase) {
  ProgramHeader h;
  EXPECT_THAT(parse(header_bytes(24, 301, 0, 0), 300, &h).message(), HasSubstr("file is 300"));
  EXPECT_THAT(parse(header_bytes(24, 200, 100, 0), 300, &h).message(),
              HasSubstr("segment base offset 100"));
  EXPECT_THAT(parse(header_bytes(24, 200, 301, 0), 300, &h).message(),
              HasSubstr("segment base offset 301"));
  EXPECT_THAT(parse(header_bytes(24, 30, 0, 0), 300, &h).message(), HasSubstr("follow the header"));
}

TEST(ProgramHeaderTest, LongerHeadersAreAccepted) {
  ProgramHeader h;
  EXPECT_TRUE(parse(header_bytes(48, 200, 0, 0), 200, &h).ok());
  EXPECT_EQ(h.length, 48u);
}

TEST(ProgramHeaderTest, Release05HeaderWithoutDataSizeIsAccepted) {
  ProgramHeader h;
  // 24 bytes: the bytes after segment_base_offset are program data, not a size.
  auto b = header_bytes(24, 200, 256, 12345);
  ASSERT_TRUE(parse(b, 356, &h).ok());
  EXPECT_EQ(h.length, 24u);
  EXPECT_EQ(h.segment_base_offset, 256u);
  EXPECT_EQ(h.segment_data_size, 0u);
}

TEST(ProgramHeaderTest, NoMagicMeansNoHeader) {
  ProgramHeader h;
  auto b = header_bytes(32, 200, 0, 0);
  std::memcpy(b.data() + 8, "\x10\x00\x00\x00", 4);
  ASSERT_TRUE(parse(b, 64, &h).ok());
  EXPECT_FALSE(h.present);
}

TEST(ProgramHeaderTest, Rejections) {
  ProgramHeader h;
  struct Case {
    std::vector<uint8_t> bytes;
    uint64_t file_size;
    Error code;
    const char* text;
  };
  auto other_magic = header_bytes(32, 200, 0, 0);
  std::memcpy(other_magic.data() + 8, "eh01", 4);
  const Case cases[] = {
      {header_bytes(16, 200, 0, 0), 300, Error::kInvalidProgram, "header length 16"},
      {header_bytes(23, 200, 0, 0), 300, Error::kInvalidProgram, "header length 23"},
      {header_bytes(32, 301, 0, 0), 300, Error::kInvalidProgram, "file is 300 bytes"},
      {header_bytes(32, 20, 0, 0), 300, Error::kInvalidProgram, "follow the header"},
      {header_bytes(32, 200, 100, 0), 300, Error::kInvalidProgram, "segment base offset 100"},
      {header_bytes(32, 200, 301, 0), 300, Error::kInvalidProgram, "segment base offset 301"},
      {header_bytes(32, 200, 256, 45), 300, Error::kInvalidProgram, "run past the end"},
      {header_bytes(32, 200, 256, UINT64_MAX), 300, Error::kInvalidProgram, "run past the end"},
      {other_magic, 300, Error::kNotSupported, "eh01"},
  };
  for (const Case& c : cases) {
    Status s = parse(c.bytes, c.file_size, &h);
    EXPECT_EQ(s.code(), c.code) << c.text;
    EXPECT_THAT(s.message(), HasSubstr(c.text));
    EXPECT_THAT(s.message(), HasSubstr("x.pte"));
  }
}

TEST(ProgramHeaderTest, TruncatedInsideHeader) {
  ProgramHeader h;
  auto b = header_bytes(32, 200, 0, 0);
  b.resize(20);
  Status s = parse(b, 20, &h);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidProgram, "truncated"));
}

TEST(ProgramHeaderTest, ShortPrefixCannotHideSegmentDataSize) {
  // A caller passing fewer prefix bytes than the header claims gets an
  // error, not a read past the prefix.
  ProgramHeader h;
  auto b = header_bytes(32, 200, 256, 44);
  b.resize(36);
  Status s = parse(b, 300, &h);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidProgram, "truncated"));
}

}  // namespace
}  // namespace torchlight
