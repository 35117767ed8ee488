#include "kernels/portable/portable_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using ::testing::ElementsAre;

// The operator names listed in portable_ops.def, read independently of the
// X-macro that builds the table.
std::set<std::string> def_file_operators() {
  std::ifstream in(TORCHLIGHT_PORTABLE_OPS_DEF);
  EXPECT_TRUE(in.good()) << TORCHLIGHT_PORTABLE_OPS_DEF;
  const std::regex line(R"re(^TL_PORTABLE_OP(?:_PREPARE)?\("([^"]+)",)re");
  std::set<std::string> names;
  std::string text;
  std::smatch match;
  while (std::getline(in, text)) {
    if (std::regex_search(text, match, line)) names.insert(match[1]);
  }
  return names;
}

TEST(PortableKernelsTest, TableListsEveryOperatorOfTheDefFile) {
  std::set<std::string> names;
  for (const Kernel& k : portable_kernels()) {
    EXPECT_TRUE(names.insert(k.name).second) << "listed twice: " << k.name;
    EXPECT_NE(k.eval, nullptr);
    ASSERT_NE(k.schema, nullptr);
    EXPECT_EQ(std::string(k.schema->name), k.name);
    EXPECT_EQ(k.priority, KernelPriority::kPortable);
    EXPECT_EQ(k.key.num_tensors, 0u);
  }
  const std::set<std::string> expected = def_file_operators();
  EXPECT_GT(expected.size(), 4u);
  EXPECT_EQ(names, expected);
}

// What each kernel writes, from its generated schema, as method load checks
// it against constants: out variants their out and return slot,
// multi-output ops every out, Tensor(a!) inputs, prim ops only their return
// slot, and ops returning nothing their out list (plus the slot upstream
// appends).
TEST(PortableKernelsTest, WrittenArgumentsFollowTheSchemas) {
  auto written = [](const std::string& name) {
    std::vector<int> positions;
    for (const Kernel& k : portable_kernels()) {
      if (name != k.name) continue;
      EXPECT_EQ(std::string(k.schema->name), name);
      for (size_t i = 0; i < k.schema->num_args; ++i) {
        if (k.schema->args[i].written) positions.push_back(static_cast<int>(i));
      }
      return positions;
    }
    ADD_FAILURE() << "no kernel " << name;
    return positions;
  };
  EXPECT_THAT(written("aten::add.out"), ElementsAre(3, 4));
  EXPECT_THAT(written("aten::div.out_mode"), ElementsAre(3, 4));
  EXPECT_THAT(written("aten::max.dim_max"), ElementsAre(3, 4, 5));
  EXPECT_THAT(written("aten::native_layer_norm.out"), ElementsAre(5, 6, 7, 8));
  EXPECT_THAT(written("aten::split_copy.Tensor_out"), ElementsAre(3));
  EXPECT_THAT(written("aten::sym_size.int"), ElementsAre(2));
  EXPECT_THAT(written("executorch_prim::add.Scalar"), ElementsAre(2));
  EXPECT_THAT(written("executorch_prim::et_view.default"), ElementsAre(2));
  EXPECT_THAT(written("executorch_prim::et_copy_index.tensor"), ElementsAre(0));
  EXPECT_THAT(written("aten::_native_batch_norm_legit.out"), ElementsAre(3, 4, 8, 9, 10, 11));
  EXPECT_THAT(written("aten::native_batch_norm.out"), ElementsAre(3, 4, 8, 9, 10, 11));
}

// Room for every portable kernel, with spare.
constexpr size_t kRoom = 1024;

TEST(PortableKernelsTest, RegistersAndResolves) {
  StaticKernelRegistry<kRoom> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_EQ(registry.kernels().size(), portable_kernels().size());
  const TensorArgMeta meta[] = {{ScalarType::kFloat, DimOrderKind::kContiguous}};
  Result<const Kernel*> add = registry.resolve("aten::add.out", meta);
  ASSERT_TRUE(add.ok());

  // Run it through the resolved pointer, as the executor would.
  TestTensor a(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{a.evalue(), a.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  alignas(64) uint8_t memory[256];
  MemoryAllocator method_memory(memory, sizeof(memory));
  const Status status = call_kernel(**add, args.span(), &method_memory);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_THAT(out.values(), ElementsAre(2, 4));
}

TEST(PortableKernelsTest, RegisteringTwiceIsADuplicate) {
  StaticKernelRegistry<kRoom> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_THAT(register_portable_kernels(registry),
              ErrorIs(Error::kInvalidArgument,
                      "kernel 'aten::_adaptive_avg_pool2d.out' is registered twice"));
}

TEST(PortableKernelsTest, FullRegistryIsOutOfResources) {
  StaticKernelRegistry<2> registry;
  EXPECT_THAT(register_portable_kernels(registry),
              ErrorIs(Error::kOutOfResources,
                      "kernel registry is full (2 entries) registering"));
}

}  // namespace
}  // namespace torchlight
