// ModuleDecoderStep and read_llm_metadata on programs that are not LLMs:
// the checks must name what is wrong. Real LLM programs are exercised end
// to end by python/tests/llm/test_llm_runner_cli.py.
#include "extension/llm/runner/module_decoder_step.h"

#include <gtest/gtest.h>

#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/pte_builder.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

const std::string kFixtures = TORCHLIGHT_FIXTURES_DIR;

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
  const std::vector<uint8_t> bytes = testing::pack(*program);
  const std::string path = ::testing::TempDir() + "/huge_max_seq_len.pte";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  Module module(path);
  auto metadata = read_llm_metadata(&module);
  ASSERT_FALSE(metadata.ok());
  EXPECT_THAT(metadata,
              ErrorIs(Error::kInvalidProgram,
                      "'get_max_seq_len' returns 2147483647, outside [1, 4194304]"));
}

}  // namespace
}  // namespace torchlight
