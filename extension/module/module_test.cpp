// Module end to end on the reference fixtures, with the real kernel library,
// in every load mode.
#include "extension/module/module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "extension/data_loader/buffer_data_loader.h"
#include "extension/tensor/owned_tensor.h"
#include "kernels/all_kernels.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/upstream_fixtures.h"

namespace torchlight {
namespace {

using ::torchlight::testing::read_float_file;
using ::torchlight::testing::upstream_fixture;

using ::torchlight::testing::ErrorIs;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A raw little-endian float32 file (the fixtures' .bin inputs and outputs).
std::vector<float> floats(const EValue& v) {
  const Tensor t = v.to_tensor();
  EXPECT_EQ(t.scalar_type(), ScalarType::kFloat);
  return std::vector<float>(t.const_data_ptr<float>(), t.const_data_ptr<float>() + t.numel());
}

class ModuleLoadModeTest : public ::testing::TestWithParam<Module::LoadMode> {};

TEST_P(ModuleLoadModeTest, AddFixture) {
  Module m(upstream_fixture("add.pte"), GetParam());
  auto a = OwnedTensor::from_values<float>({1}, {1.5f});
  auto b = OwnedTensor::from_values<float>({1}, {2.25f});
  ASSERT_TRUE(a.ok() && b.ok());
  auto out = m.forward({a->evalue(), b->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_THAT(floats((*out)[0]), ElementsAre(3.75f));
}

TEST_P(ModuleLoadModeTest, AddEhFixture) {
  Module m(upstream_fixture("add_eh.pte"), GetParam());
  auto x = OwnedTensor::from_values<float>({3}, {1, 2, 3});
  auto out = m.forward({x->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(floats((*out)[0]), ElementsAre(2, 3, 4));
}

TEST_P(ModuleLoadModeTest, LinearConstantBufferFixture) {
  Module m(upstream_fixture("linear_constant_buffer.pte"), GetParam());
  auto x = OwnedTensor::from_values<float>({2, 2}, {1, 2, 3, 4});
  auto out = m.execute("forward", {x->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(floats((*out)[0]), ElementsAre(5, 8, 11, 14));
  EXPECT_THAT((*out)[0].to_tensor().sizes(), ElementsAre(2, 2));
}

INSTANTIATE_TEST_SUITE_P(AllModes, ModuleLoadModeTest,
                         ::testing::Values(Module::LoadMode::kFile, Module::LoadMode::kMmap,
                                           Module::LoadMode::kMmapUseMlockIgnoreErrors));

TEST(ModuleTest, MetadataWithoutRunning) {
  Module m(upstream_fixture("add.pte"));
  auto names = m.method_names();
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ElementsAre("forward"));
  auto meta = m.method_meta("forward");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->num_inputs(), 2u);
  EXPECT_FALSE(m.is_method_loaded("forward"));
  ASSERT_TRUE(m.load_method("forward").ok());
  EXPECT_TRUE(m.is_method_loaded("forward"));
  EXPECT_EQ(m.planned_bytes("forward"), 48u);
}

// The default form offers XnnpackBackend: upstream's delegated MLP runs with
// no registry passed, within 1e-4 relative of PyTorch eager's saved output.
TEST(ModuleTest, DefaultFormRunsAnXnnpackDelegatedProgram) {
  Module m(upstream_fixture("mlp_xnnpack.pte"));
  const std::vector<float> x = read_float_file(upstream_fixture("mlp_xnnpack.input0.bin"));
  const std::vector<float> expected = read_float_file(upstream_fixture("mlp_xnnpack.output0.bin"));
  ASSERT_EQ(x.size(), 32u);
  ASSERT_EQ(expected.size(), 8u);
  auto input = OwnedTensor::from_values<float>({2, 16}, Span<const float>(x.data(), x.size()));
  ASSERT_TRUE(input.ok());
  auto out = m.forward({input->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<float> got = floats((*out)[0]);
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-4 * (1.0 + std::fabs(expected[i]))) << "element " << i;
  }
}

// Over a caller's loader (bytes in memory), as upstream's Module(DataLoader).
TEST(ModuleTest, RunsFromACallersDataLoader) {
  std::ifstream in(upstream_fixture("add.pte"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  auto kernels = all_kernels();
  ASSERT_TRUE(kernels.ok());
  Module m(std::make_unique<BufferDataLoader>(bytes.data(), bytes.size(), "add in memory"),
           **kernels);
  EXPECT_TRUE(m.path().empty());
  auto a = OwnedTensor::from_values<float>({1}, {1.0f});
  auto b = OwnedTensor::from_values<float>({1}, {0.5f});
  auto out = m.forward({a->evalue(), b->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(floats((*out)[0]), ElementsAre(1.5f));

  // A corrupt buffer is named by the loader's name.
  const std::vector<char> cut(bytes.begin(), bytes.begin() + 40);
  Module bad(std::make_unique<BufferDataLoader>(cut.data(), cut.size(), "cut in memory"),
             **kernels);
  EXPECT_THAT(bad.load(), ErrorIs(Error::kInvalidProgram, "cut in memory"));
}

TEST(ModuleTest, MissingFileNamesThePath) {
  Module m("/nonexistent/model.pte");
  auto out = m.forward();
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out, ErrorIs(Error::kNotFound, "/nonexistent/model.pte"));
}

TEST(ModuleTest, WrongInputCountAndDtype) {
  Module m(upstream_fixture("add.pte"));
  auto a = OwnedTensor::from_values<float>({1}, {1.0f});
  auto count = m.forward({a->evalue()});
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count, ErrorIs(Error::kInvalidArgument, "takes 2 inputs, 1 were given"));

  auto i = OwnedTensor::from_values<int64_t>({1}, {1});
  auto dtype = m.forward({a->evalue(), i->evalue()});
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype, ErrorIs(Error::kInvalidType, "input 1"));
}

TEST(ModuleTest, UnknownMethod) {
  Module m(upstream_fixture("add.pte"));
  auto out = m.execute("decode");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out, ErrorIs(Error::kNotFound, "'decode'"));
}

TEST(ModuleTest, PlannedArenasAboveTheLimitAreRefused) {
  // add.pte plans one 48-byte arena.
  Module tight(upstream_fixture("add.pte"));
  EXPECT_GE(tight.planned_memory_limit(), size_t{1} << 20);  // The machine's memory by default.
  tight.set_planned_memory_limit(47);
  Status status = tight.load_method("forward");
  EXPECT_THAT(status, ErrorIs(Error::kMemoryAllocationFailed, "48 bytes in planned arena 0"));
  EXPECT_THAT(status.message(), HasSubstr("limit of 47 bytes"));
  EXPECT_FALSE(tight.is_method_loaded("forward"));

  Module exact(upstream_fixture("add.pte"));
  exact.set_planned_memory_limit(48);
  EXPECT_TRUE(exact.load_method("forward").ok());
  EXPECT_EQ(exact.planned_bytes("forward"), 48u);
}

TEST(ModuleTest, MaxStepsReachesEveryMethod) {
  Module m(upstream_fixture("add.pte"));
  m.set_max_steps(0);  // Not even the one add may run.
  auto a = OwnedTensor::from_values<float>({1}, {1.0f});
  auto b = OwnedTensor::from_values<float>({1}, {2.0f});
  ASSERT_TRUE(a.ok() && b.ok());
  auto out = m.forward({a->evalue(), b->evalue()});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out, ErrorIs(Error::kOutOfResources));
  m.set_max_steps(10);  // Applies to the already loaded method too.
  out = m.forward({a->evalue(), b->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(floats((*out)[0]), ElementsAre(3.0f));
}

}  // namespace
}  // namespace torchlight
