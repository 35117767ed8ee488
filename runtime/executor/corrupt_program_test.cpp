// Hostile input: every truncation of each fixture and a few thousand seeded
// random byte flips must end in an error (or, where the damage is harmless,
// a normal run) and never in a crash or a sanitizer report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "extension/data_loader/buffer_data_loader.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/program.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/test_kernels.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using testing::read_fixture;

const char* const kFixtures[] = {"add.pte", "add_eh.pte", "linear_constant_buffer.pte"};

enum class Outcome { kProgramError, kMethodError, kInputError, kExecuteError, kRan };

// Loads, loads the method, sets float inputs of the planned shapes, runs.
// Returns how far it got; every error must carry a message.
Outcome exercise(const std::vector<uint8_t>& bytes, const char* name) {
  BufferDataLoader loader(bytes.data(), bytes.size(), name);
  auto program = Program::load(&loader);
  if (!program.ok()) {
    EXPECT_GT(std::strlen(program.status().message()), 10u);
    return Outcome::kProgramError;
  }
  StaticKernelRegistry<8> kernels;
  testing::register_test_kernels(kernels);
  for (size_t m = 0; m < program->num_methods(); ++m) {
    auto method_name = program->method_name(m);
    if (!method_name.ok()) return Outcome::kMethodError;
    auto meta = program->method_meta(method_name.get());
    if (!meta.ok()) return Outcome::kMethodError;
    std::vector<size_t> sizes;
    for (size_t i = 0; i < meta->num_planned_buffers(); ++i) {
      auto size = meta->planned_buffer_size(i);
      if (!size.ok() || size.get() > (1 << 20)) return Outcome::kMethodError;
      sizes.push_back(static_cast<size_t>(size.get()));
    }
    testing::TestMemory memory(sizes);
    auto method = program->load_method(method_name.get(), &memory.manager, kernels);
    if (!method.ok()) {
      EXPECT_GT(std::strlen(method.status().message()), 10u);
      return Outcome::kMethodError;
    }
    std::vector<std::vector<float>> data;
    std::vector<std::unique_ptr<TensorImpl>> impls;
    std::vector<std::vector<int32_t>> shapes;
    std::vector<std::vector<uint8_t>> orders;
    std::vector<std::vector<int64_t>> strides;
    for (size_t i = 0; i < method->inputs_size(); ++i) {
      const EValue& slot = method->input_value(i);
      if (!slot.is_tensor()) return Outcome::kInputError;
      const Tensor t = slot.to_tensor();
      if (t.numel() > (1 << 16)) return Outcome::kInputError;
      shapes.emplace_back(t.sizes().begin(), t.sizes().end());
      orders.emplace_back(t.dim_order().begin(), t.dim_order().end());
      strides.emplace_back(t.strides().begin(), t.strides().end());
      data.emplace_back(static_cast<size_t>(t.numel()) * 2 + 1, 1.0f);
      impls.push_back(std::make_unique<TensorImpl>(t.scalar_type(), t.dim(), shapes.back().data(),
                                                   data.back().data(), orders.back().data(),
                                                   strides.back().data()));
      Status status = method->set_input(i, EValue(Tensor(impls.back().get())));
      if (!status.ok()) return Outcome::kInputError;
    }
    method->set_max_steps(10000);
    if (!method->execute().ok()) return Outcome::kExecuteError;
  }
  return Outcome::kRan;
}

TEST(CorruptProgramTest, IntactFixturesRun) {
  for (const char* fixture : kFixtures) {
    const auto bytes = read_fixture(fixture);
    BufferDataLoader loader(bytes.data(), bytes.size(), fixture);
    auto program = Program::load(&loader);
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_EQ(exercise(bytes, fixture), Outcome::kRan) << fixture;
  }
}

TEST(CorruptProgramTest, EveryTruncationFailsCleanly) {
  for (const char* fixture : kFixtures) {
    const auto bytes = read_fixture(fixture);
    size_t program_errors = 0;
    for (size_t length = 0; length < bytes.size(); ++length) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
      const Outcome outcome = exercise(prefix, fixture);
      // Cutting a file short never yields a runnable program.
      EXPECT_NE(outcome, Outcome::kRan) << fixture << " truncated to " << length;
      program_errors += outcome == Outcome::kProgramError;
    }
    EXPECT_EQ(program_errors, bytes.size()) << fixture;
  }
}

TEST(CorruptProgramTest, TruncationMessageNamesTheFile) {
  const auto bytes = read_fixture("add.pte");
  std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + bytes.size() / 2);
  BufferDataLoader loader(prefix.data(), prefix.size(), "half_of_add.pte");
  auto program = Program::load(&loader);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program, ErrorIs(Error::kInvalidProgram, "half_of_add.pte"));
}

TEST(CorruptProgramTest, RandomByteFlipsNeverCrash) {
  std::mt19937 rng(20261121);
  constexpr int kMutationsPerFixture = 1500;
  int outcomes[5] = {};
  for (const char* fixture : kFixtures) {
    const auto original = read_fixture(fixture);
    for (int i = 0; i < kMutationsPerFixture; ++i) {
      auto bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = rng() % bytes.size();
        // Mix single-bit flips (near-valid files) with whole random bytes.
        bytes[at] = (rng() & 1) ? static_cast<uint8_t>(bytes[at] ^ (1u << (rng() % 8)))
                                : static_cast<uint8_t>(rng());
      }
      ++outcomes[static_cast<int>(exercise(bytes, fixture))];
    }
  }
  // Both paths must be exercised: some damage is caught, some is harmless.
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kProgramError)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kRan)], 0);
  RecordProperty("program_errors", outcomes[0]);
  RecordProperty("method_errors", outcomes[1]);
  RecordProperty("ran", outcomes[4]);
}

}  // namespace
}  // namespace torchlight
