// ModuleDecoderStep and read_llm_metadata on programs that are not LLMs:
// the checks must name what is wrong. Real LLM programs are exercised end
// to end by python/tests/llm/test_llm_runner_cli.py.
#include "extension/llm/runner/module_decoder_step.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <limits>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/core/half.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/pte_builder.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

const std::string kFixtures = TORCHLIGHT_FIXTURES_DIR;

std::string write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(ModuleDecoderStepTest, ProgramWithoutMetadataReadsAsEmpty) {
  Module module(kFixtures + "/add.pte");
  auto metadata = read_llm_metadata(&module);
  ASSERT_TRUE(metadata.ok()) << metadata.status().message();
  EXPECT_FALSE(metadata->max_seq_len.has_value());
  EXPECT_FALSE(metadata->vocab_size.has_value());
  EXPECT_FALSE(metadata->bos_id.has_value());
  EXPECT_TRUE(metadata->eos_ids.empty());
  EXPECT_TRUE(metadata->tokenizer.empty());
}

TEST(ModuleDecoderStepTest, MissingFileIsNotFound) {
  Module module(kFixtures + "/no_such_model.pte");
  auto metadata = read_llm_metadata(&module);
  ASSERT_FALSE(metadata.ok());
  EXPECT_THAT(metadata, ErrorIs(Error::kNotFound, "no_such_model.pte"));
}

TEST(ModuleDecoderStepTest, WrongInputDtypeNamesTheInputAndTheSignature) {
  Module module(kFixtures + "/add.pte");  // forward(float32 [1], float32 [1])
  auto step = ModuleDecoderStep::create(&module, LlmMetadata{});
  ASSERT_FALSE(step.ok());
  EXPECT_THAT(step, ErrorIs(Error::kInvalidProgram));
  const std::string message = step.status().message();
  EXPECT_NE(message.find("input 0 (tokens)"), std::string::npos) << message;
  EXPECT_NE(message.find("float32"), std::string::npos) << message;
  EXPECT_NE(message.find("int64"), std::string::npos) << message;
}

TEST(ModuleDecoderStepTest, OneFloatInputIsInvalidProgram) {
  // One input reads as a program without a KV cache, forward(tokens); a
  // float one is not an LLM's.
  Module module(kFixtures + "/add_eh.pte");  // forward(float32 [3])
  auto step = ModuleDecoderStep::create(&module, LlmMetadata{});
  ASSERT_FALSE(step.ok());
  EXPECT_THAT(step, ErrorIs(Error::kInvalidProgram, "input 0 (tokens)"));
}

// A crafted program whose get_max_seq_len() says INT32_MAX: the runner
// would size its token buffers from it, so the metadata is refused.
TEST(ModuleDecoderStepTest, HugeMaxSeqLenIsRefused) {
  std::vector<fb::EValueT> values;
  values.push_back(testing::int_value(INT32_MAX));
  auto program = testing::make_program(LlmMetadata::kMaxSeqLen, std::move(values), {}, {0}, {}, {},
                                       {});
  Module module(write_temp("huge_max_seq_len.pte", testing::pack(*program)));
  auto metadata = read_llm_metadata(&module);
  ASSERT_FALSE(metadata.ok());
  EXPECT_THAT(metadata,
              ErrorIs(Error::kInvalidProgram,
                      "'get_max_seq_len' returns 2147483647, outside [1, 4194304]"));
}

// A decode step laid out as upstream's -kv programs, forward(tokens [1, 1],
// input_pos [1]) -> logits [1, 1, kVocab], whose logits are a 16-bit row
// of a constant table picked by the token (an embedding lookup): the step
// must hand the runner that row widened to float32, exactly.
constexpr int32_t kVocab = 6;
constexpr int32_t kRows = 3;

template <typename T16>
std::vector<uint8_t> sixteen_bit_logits_program(fb::ScalarType dtype, const std::vector<float>& table) {
  std::vector<uint8_t> bytes(table.size() * sizeof(T16));
  for (size_t i = 0; i < table.size(); ++i) {
    const T16 value(table[i]);
    std::memcpy(bytes.data() + i * sizeof(T16), &value, sizeof(T16));
  }
  std::vector<fb::EValueT> values;
  values.push_back(testing::tensor_value(fb::ScalarType::LONG, {1, 1}, 1, 0));  // tokens
  values.push_back(testing::tensor_value(fb::ScalarType::LONG, {1}, 1, 64));    // input_pos
  values.push_back(testing::tensor_value(dtype, {kRows, kVocab}, 0, 0, 1));   // the table
  values.push_back(testing::int_value(-1));                                    // padding_idx
  values.push_back(testing::bool_value(false));                                // scale_grad_by_freq
  values.push_back(testing::bool_value(false));                                // sparse
  values.push_back(testing::tensor_value(dtype, {1, 1, kVocab}, 1, 128));      // logits
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(testing::op("aten::embedding", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(testing::kernel_call(0, {2, 0, 3, 4, 5, 6, 6}));
  auto program = testing::make_program(ModuleDecoderStep::kMethodName, std::move(values), {0, 1}, {6},
                                       std::move(ops), std::move(instructions), {256});
  program->constant_buffer.push_back(std::make_unique<fb::BufferT>());  // entry 0 is reserved
  program->constant_buffer.push_back(std::make_unique<fb::BufferT>());
  program->constant_buffer.back()->storage = std::move(bytes);
  return testing::pack(*program);
}

template <typename T16>
void expect_widened_rows(fb::ScalarType dtype, const std::string& name) {
  // Values a 16-bit type rounds (0.1, 1/3), its extremes and signed zero,
  // infinity; each row differs so the step must read the current call's.
  const std::vector<float> table = {
      0.1f, -1.0f / 3.0f, 1.5f, -2.25f, 0.0f, -0.0f,
      60000.0f, -0.0078125f, 1e-3f, 3.0f, -7.5f, std::numeric_limits<float>::infinity(),
      -60000.0f, 0.5f, 42.0f, -1e-2f, 2.0f, 1.0f};
  Module module(write_temp(name, sixteen_bit_logits_program<T16>(dtype, table)));
  LlmMetadata metadata;
  metadata.max_seq_len = 4;
  auto step = ModuleDecoderStep::create(&module, metadata);
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_EQ((*step)->vocab_size(), kVocab);
  for (int64_t token : {2, 0, 1}) {
    const int64_t tokens[] = {token};
    auto logits = (*step)->run(Span<const int64_t>(tokens, 1), token);
    ASSERT_TRUE(logits.ok()) << logits.status().message();
    ASSERT_EQ(logits->size(), static_cast<size_t>(kVocab));
    for (int32_t v = 0; v < kVocab; ++v) {
      const float expected = static_cast<float>(T16(table[static_cast<size_t>(token * kVocab + v)]));
      const float got = (*logits)[static_cast<size_t>(v)];
      EXPECT_EQ(std::memcmp(&got, &expected, sizeof(float)), 0)
          << "token " << token << ", logit " << v << ": " << got << " vs " << expected;
    }
  }
}

TEST(ModuleDecoderStepTest, Float16LogitsAreWidenedExactly) {
  expect_widened_rows<Half>(fb::ScalarType::HALF, "half_logits.pte");
}

TEST(ModuleDecoderStepTest, BFloat16LogitsAreWidenedExactly) {
  expect_widened_rows<BFloat16>(fb::ScalarType::BFLOAT16, "bfloat16_logits.pte");
}

}  // namespace
}  // namespace torchlight
