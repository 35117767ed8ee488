// Program loading: the reference fixtures, header detection, MethodMeta,
// and every way a file can lie about itself.
#include "runtime/executor/program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "extension/data_loader/buffer_data_loader.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/program_named_data.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/test_kernels.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;
using testing::pack;
using testing::read_fixture;
using testing::unpack;

Result<Program> load_bytes(const std::vector<uint8_t>& bytes, const char* name = "test.pte") {
  static std::vector<std::unique_ptr<BufferDataLoader>> loaders;  // Outlive the Program.
  loaders.push_back(std::make_unique<BufferDataLoader>(bytes.data(), bytes.size(), name));
  return Program::load(loaders.back().get());
}

TEST(ProgramTest, LoadsAddWithoutExtendedHeader) {
  const auto bytes = read_fixture("add.pte");
  auto program = load_bytes(bytes, "add.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_FALSE(program->header().present);
  EXPECT_EQ(program->num_methods(), 1u);
  EXPECT_EQ(program->method_name(0).get(), "forward");
  // The reference writer emits one empty segment for a program without constants.
  EXPECT_EQ(program->num_segments(), 1u);
  EXPECT_EQ(program->segment(0)->size, 0u);
  EXPECT_EQ(program->constant_bytes(), 0u);

  auto meta = program->method_meta("forward");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->num_inputs(), 2u);
  EXPECT_EQ(meta->num_outputs(), 1u);
  auto input = meta->input_tensor_info(0);
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->dtype, ScalarType::kFloat);
  ASSERT_EQ(input->sizes.size(), 1u);
  EXPECT_EQ(input->sizes[0], 1);
  EXPECT_TRUE(input->memory_planned);
  ASSERT_EQ(meta->num_planned_buffers(), 1u);
  EXPECT_EQ(meta->planned_buffer_size(0).get(), 48);
  char name[64];
  ASSERT_EQ(meta->num_operators(), 1u);
  EXPECT_STREQ(meta->operator_name(0, name, sizeof(name)).get(), "aten::add.out");
  EXPECT_EQ(meta->num_backends(), 0u);
}

TEST(ProgramTest, LoadsExtendedHeaderAndConstantSegment) {
  const auto bytes = read_fixture("add_eh.pte");
  auto program = load_bytes(bytes, "add_eh.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(program->header().present);
  EXPECT_EQ(program->header().length, 32u);
  EXPECT_LE(program->header().program_size, bytes.size());
  EXPECT_GE(program->header().segment_base_offset, program->header().program_size);
  EXPECT_EQ(program->num_segments(), 1u);
  EXPECT_FALSE(program->uses_legacy_constant_buffer());
  EXPECT_EQ(program->constant_bytes(), 4u);  // One float32 constant.
  auto data = program->constant_data(1, 4);
  ASSERT_TRUE(data.ok()) << data.status().message();
  float value = 0;
  std::memcpy(&value, data.get(), 4);
  EXPECT_EQ(value, 1.0f);
  EXPECT_EQ(program->method_meta("forward")->planned_buffer_size(0).get(), 32);
}

// Rewrites a file packed with a 32-byte header into release 0.5's layout: the
// length field says 24 and the former segment_data_size bytes are padding.
std::vector<uint8_t> with_24_byte_header(std::vector<uint8_t> bytes) {
  testing::put_u32(bytes, 12, 24);
  testing::put_u64(bytes, 32, 0);
  return bytes;
}

TEST(ProgramTest, LoadsUpstreamReleaseZeroFiveXnnpackProgram) {
  const auto bytes = read_fixture("mlp_xnnpack.pte");
  auto program = load_bytes(bytes, "mlp_xnnpack.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  // Header fields as the spec decodes them (pte-format.md section 1,
  // xnnpack-format.md section 8).
  const ProgramHeader& header = program->header();
  EXPECT_TRUE(header.present);
  EXPECT_EQ(header.length, 24u);
  EXPECT_EQ(header.program_size, 976u);
  EXPECT_EQ(header.segment_base_offset, 1024u);
  EXPECT_FALSE(header.has_segment_data_size);
  ASSERT_EQ(program->num_segments(), 2u);
  EXPECT_EQ(program->segment(0)->size, 0u);
  EXPECT_EQ(program->segment(1)->offset, 0u);
  EXPECT_EQ(program->segment(1)->size, 3584u);  // Ends exactly at the file end.
  auto payload = program->load_segment(1, {DataLoader::SegmentKind::kBackend, 1});
  ASSERT_TRUE(payload.ok()) << payload.status().message();
  ASSERT_EQ(payload->size(), 3584u);
  EXPECT_EQ(std::memcmp(static_cast<const uint8_t*>(payload->data()) + 4, "XH00", 4), 0);

  auto meta = program->method_meta("forward");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->num_inputs(), 1u);
  EXPECT_EQ(meta->num_outputs(), 1u);
  auto input = meta->input_tensor_info(0);
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->dtype, ScalarType::kFloat);
  ASSERT_EQ(input->sizes.size(), 2u);
  EXPECT_EQ(input->sizes[0], 2);
  EXPECT_EQ(input->sizes[1], 16);
  auto output = meta->output_tensor_info(0);
  ASSERT_TRUE(output.ok());
  ASSERT_EQ(output->sizes.size(), 2u);
  EXPECT_EQ(output->sizes[0], 2);
  EXPECT_EQ(output->sizes[1], 4);
  EXPECT_EQ(meta->num_operators(), 0u);
  ASSERT_EQ(meta->num_backends(), 1u);
  EXPECT_EQ(meta->backend_name(0).get(), "XnnpackBackend");

  // Without the backend, the method fails to load and says which backend.
  std::vector<size_t> arenas;
  for (size_t i = 0; i < meta->num_planned_buffers(); ++i) {
    arenas.push_back(static_cast<size_t>(meta->planned_buffer_size(i).get()));
  }
  testing::TestMemory memory(arenas);
  StaticKernelRegistry<1> kernels;
  BackendRegistry backends;
  auto method = program->load_method("forward", &memory.manager, kernels, &backends);
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.status().message(), HasSubstr("XnnpackBackend"));
  EXPECT_THAT(method.status().message(), HasSubstr("not registered"));
}

TEST(ProgramTest, TwentyFourByteHeaderWithSegments) {
  auto object = unpack(read_fixture("add_eh.pte"));
  const std::vector<uint8_t> second = {9, 8, 7, 6, 5};
  auto bytes = with_24_byte_header(pack(*object, {{0, 0, 128, 63}, second}));
  auto program = load_bytes(bytes, "eh24.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->header().length, 24u);
  EXPECT_FALSE(program->header().has_segment_data_size);
  auto data = program->constant_data(1, 4);
  ASSERT_TRUE(data.ok()) << data.status().message();
  float value = 0;
  std::memcpy(&value, data.get(), 4);
  EXPECT_EQ(value, 1.0f);
  auto tail = program->load_segment(1, {DataLoader::SegmentKind::kBackend, 1});
  ASSERT_TRUE(tail.ok()) << tail.status().message();
  ASSERT_EQ(tail->size(), second.size());
  EXPECT_EQ(std::memcmp(tail->data(), second.data(), second.size()), 0);

  // Trailing bytes after the last segment are fine: the file bounds segments.
  auto padded = bytes;
  padded.resize(padded.size() + 100, 0);
  EXPECT_TRUE(load_bytes(padded).ok());

  // With the last segment cut short, the file end is the bound that fails.
  auto truncated = bytes;
  truncated.pop_back();
  auto cut = load_bytes(truncated, "eh24_cut.pte");
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut, ErrorIs(Error::kInvalidProgram, "segment 1"));
  EXPECT_THAT(cut.status().message(), HasSubstr("eh24_cut.pte"));
}

TEST(ProgramTest, ThirtyTwoByteHeaderSegmentDataSizeIsBinding) {
  // A recorded size of 0 is a size, not "unknown": segment 0 must fit in it.
  auto object = unpack(read_fixture("add_eh.pte"));
  auto bytes = pack(*object, {{0, 0, 128, 63}});
  testing::put_u64(bytes, 32, 0);
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("runs past the 0 bytes"));
}

TEST(ProgramTest, LoadsLegacyConstantBuffer) {
  const auto bytes = read_fixture("linear_constant_buffer.pte");
  auto program = load_bytes(bytes, "linear_constant_buffer.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(program->uses_legacy_constant_buffer());
  EXPECT_GT(program->constant_bytes(), 0u);
  auto meta = program->method_meta("forward");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->num_operators(), 2u);
}

TEST(ProgramTest, UnknownMethodListsTheOnesThatExist) {
  const auto bytes = read_fixture("add.pte");
  auto program = load_bytes(bytes, "add.pte");
  ASSERT_TRUE(program.ok());
  auto meta = program->method_meta("backward");
  ASSERT_FALSE(meta.ok());
  EXPECT_THAT(meta, ErrorIs(Error::kNotFound, "'backward'"));
  EXPECT_THAT(meta.status().message(), HasSubstr("'forward'"));
  EXPECT_THAT(meta.status().message(), HasSubstr("add.pte"));
  EXPECT_THAT(program->method_name(3),
              ErrorIs(Error::kInvalidArgument, "'add.pte' has 1 methods; index 3 is out of range"));
}

TEST(ProgramTest, RepackedFixtureStillLoads) {
  // Guards the builder the corruption tests rely on.
  auto object = unpack(read_fixture("add.pte"));
  auto with_header = pack(*object, {}, /*extended_header=*/true);
  auto program = load_bytes(with_header);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(program->header().present);
}

TEST(ProgramTest, NamedDataAndSegmentsAreReadable) {
  auto object = unpack(read_fixture("add.pte"));
  auto named = std::make_unique<fb::NamedDataT>();
  named->key = "weights";
  named->segment_index = 1;
  object->named_data.push_back(std::move(named));
  const std::vector<uint8_t> first = {1, 2, 3};
  const std::vector<uint8_t> second = {9, 8, 7, 6, 5};
  auto bytes = pack(*object, {first, second});
  auto program = load_bytes(bytes);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->num_segments(), 2u);
  EXPECT_EQ(program->segment(1)->size, 5u);
  auto data = program->named_data("weights");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->size(), 5u);
  EXPECT_EQ(std::vector<uint8_t>(data->bytes().begin(), data->bytes().end()), second);
  EXPECT_THAT(program->named_data("bias"),
              ErrorIs(Error::kNotFound, "'test.pte' has no named data 'bias'"));
}

TEST(ProgramTest, NamedDataMapHasUpstreamsInterface) {
  auto object = unpack(read_fixture("add.pte"));
  for (const char* key : {"weights", "bias"}) {
    auto named = std::make_unique<fb::NamedDataT>();
    named->key = key;
    named->segment_index = object->named_data.empty() ? 1 : 0;
    object->named_data.push_back(std::move(named));
  }
  const std::vector<uint8_t> first = {1, 2, 3};
  const std::vector<uint8_t> second = {9, 8, 7, 6, 5};
  auto bytes = pack(*object, {first, second});
  auto program = load_bytes(bytes);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ProgramNamedData map(*program);
  const NamedDataMap& data = map;

  ASSERT_EQ(*data.get_num_keys(), 2u);
  EXPECT_STREQ(*data.get_key(0), "weights");
  EXPECT_STREQ(*data.get_key(1), "bias");
  EXPECT_THAT(data.get_key(2),
              ErrorIs(Error::kInvalidArgument, "has 2 named data keys; index 2 is out of range"));

  uint8_t buffer[8] = {0};
  ASSERT_TRUE(data.load_data_into("weights", buffer, 5).ok());
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + 5), second);
  uint8_t part[2] = {0};
  ASSERT_TRUE(data.load_data_into("bias", part, 2).ok());  // A prefix is fine.
  EXPECT_EQ(part[0], 1);
  EXPECT_EQ(part[1], 2);
  EXPECT_THAT(data.load_data_into("bias", buffer, 4),
              ErrorIs(Error::kInvalidArgument, "named data 'bias' holds 3 bytes; 4 were asked"));
  EXPECT_THAT(data.load_data_into("bias", nullptr, 1),
              ErrorIs(Error::kInvalidArgument, "no buffer"));
  EXPECT_TRUE(data.load_data_into("bias", nullptr, 0).ok());
  EXPECT_THAT(data.load_data_into("scale", buffer, 1),
              ErrorIs(Error::kNotFound, "no named data 'scale'"));

  auto blob = data.get_data("bias");
  ASSERT_TRUE(blob.ok()) << blob.status().message();
  EXPECT_EQ(std::vector<uint8_t>(blob->bytes().begin(), blob->bytes().end()), first);
  EXPECT_THAT(data.get_tensor_layout("bias"),
              ErrorIs(Error::kNotSupported, "'bias' of 'test.pte' is an opaque blob"));
  EXPECT_THAT(data.get_tensor_layout("scale"), ErrorIs(Error::kNotFound, "'scale'"));
}

TEST(ProgramTest, NamedDataMapOfAProgramWithoutNamedData) {
  auto bytes = read_fixture("add.pte");
  auto program = load_bytes(bytes);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ProgramNamedData data(*program);
  EXPECT_EQ(*data.get_num_keys(), 0u);
  EXPECT_THAT(data.get_key(0), ErrorIs(Error::kInvalidArgument, "has 0 named data keys"));
  uint8_t byte = 0;
  EXPECT_THAT(data.load_data_into("w", &byte, 1), ErrorIs(Error::kNotFound, "'w'"));
}

// --- Bad files ----------------------------------------------------------------

TEST(ProgramErrorTest, TooShort) {
  std::vector<uint8_t> bytes = {1, 2, 3};
  auto program = load_bytes(bytes, "tiny.pte");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "tiny.pte"));
  EXPECT_THAT(program.status().message(), HasSubstr("too short"));
}

TEST(ProgramErrorTest, WrongIdentifier) {
  auto bytes = read_fixture("add.pte");
  std::memcpy(bytes.data() + 4, "PK\x03\x04", 4);
  auto program = load_bytes(bytes, "zip.pte");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "not a .pte program"));
  EXPECT_THAT(program.status().message(), HasSubstr("ET12"));
}

TEST(ProgramErrorTest, OtherFormatVersionIsNotSupported) {
  auto bytes = read_fixture("add.pte");
  std::memcpy(bytes.data() + 4, "ET99", 4);
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kNotSupported, "ET99"));
}

TEST(ProgramErrorTest, HeaderProgramSizePastEnd) {
  auto bytes = read_fixture("add_eh.pte");
  testing::put_u64(bytes, 16, bytes.size() + 1);
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "program is"));
}

TEST(ProgramErrorTest, HeaderHugeSizesDoNotOverflow) {
  for (size_t field : {16u, 24u, 32u}) {
    auto bytes = read_fixture("add_eh.pte");
    testing::put_u64(bytes, field, UINT64_MAX);
    auto program = load_bytes(bytes);
    ASSERT_FALSE(program.ok()) << "field " << field;
    EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "18446744073709551615"))
        << "field " << field;
  }
  auto bytes = read_fixture("add_eh.pte");
  testing::put_u32(bytes, 12, UINT32_MAX);  // Header length.
  EXPECT_THAT(load_bytes(bytes),
              ErrorIs(Error::kInvalidProgram, "extended header length 4294967295 is invalid"));
}

TEST(ProgramErrorTest, SegmentPastEnd) {
  auto object = unpack(read_fixture("add_eh.pte"));
  auto bytes = pack(*object, {{0, 0, 128, 63}});
  ASSERT_TRUE(load_bytes(bytes).ok());
  // The header's segment data size now claims less than segment 0 needs.
  testing::put_u64(bytes, 32, 2);
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "segment 0"));
}

TEST(ProgramErrorTest, SegmentOffsetOverflow) {
  // A segment whose offset + size wraps around 2^64 must not pass the check.
  auto object = unpack(read_fixture("add_eh.pte"));
  auto bytes = pack(*object, {{0, 0, 128, 63}});
  auto corrupt = unpack(bytes);
  corrupt->segments[0]->offset = UINT64_MAX - 1;
  corrupt->segments[0]->size = 4;
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Program::Pack(builder, corrupt.get()), fb::ProgramIdentifier());
  // Reuse the original header and segment area around the new flatbuffer.
  std::vector<uint8_t> flat(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  std::vector<uint8_t> out(flat.begin(), flat.begin() + 8);
  out.insert(out.end(), bytes.begin() + 8, bytes.begin() + 40);
  out.insert(out.end(), flat.begin() + 8, flat.end());
  uint32_t root = 0;
  std::memcpy(&root, flat.data(), 4);
  testing::put_u32(out, 0, root + 32);
  testing::put_u64(out, 16, out.size());
  const size_t base = (out.size() + 127) / 128 * 128;
  testing::put_u64(out, 24, base);
  testing::put_u64(out, 32, 4);
  out.resize(base + 4, 0);
  auto program = load_bytes(out);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "runs past"));
}

TEST(ProgramErrorTest, SegmentsWithoutHeader) {
  auto object = unpack(read_fixture("add_eh.pte"));
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Program::Pack(builder, object.get()), fb::ProgramIdentifier());
  std::vector<uint8_t> bytes(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("no extended header locating segments"));
}

TEST(ProgramErrorTest, ConstantSegmentIndexOutOfRange) {
  auto object = unpack(read_fixture("add_eh.pte"));
  object->constant_segment->segment_index = 7;
  auto bytes = pack(*object, {{0, 0, 128, 63}});
  auto program = load_bytes(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "segment 7"));
}

TEST(ProgramErrorTest, ConstantOffsetPastSegment) {
  auto object = unpack(read_fixture("add_eh.pte"));
  object->constant_segment->offsets[1] = 1000;
  auto bytes = pack(*object, {{0, 0, 128, 63}});
  auto program = load_bytes(bytes);
  ASSERT_TRUE(program.ok());  // Checked when a tensor asks for it.
  auto data = program->constant_data(1, 4);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data, ErrorIs(Error::kInvalidProgram, "runs past"));
  EXPECT_THAT(program->constant_data(9, 4),
              ErrorIs(Error::kInvalidProgram,
                      "constant index 9 is out of range (the constant segment lists 2)"));
  EXPECT_THAT(program->constant_data(1, SIZE_MAX),
              ErrorIs(Error::kInvalidProgram, "runs past the 4-byte constant segment"));
}

TEST(ProgramErrorTest, FlatbufferCorruptionFailsVerification) {
  auto bytes = read_fixture("add.pte");
  testing::put_u32(bytes, 0, static_cast<uint32_t>(bytes.size() + 100));  // Root past end.
  auto program = load_bytes(bytes, "bad_root.pte");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "bad_root.pte"));
  EXPECT_THAT(program.status().message(), HasSubstr("verification"));
}

}  // namespace
}  // namespace torchlight
