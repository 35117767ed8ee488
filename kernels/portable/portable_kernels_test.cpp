#include "kernels/portable/portable_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "kernels/portable/test/test_tensor.h"

namespace torchlight {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using ::testing::ElementsAre;

// The operator names listed in portable_ops.def, read independently of the
// X-macro that builds the table.
std::set<std::string> def_file_operators() {
  std::ifstream in(TORCHLIGHT_PORTABLE_OPS_DEF);
  EXPECT_TRUE(in.good()) << TORCHLIGHT_PORTABLE_OPS_DEF;
  const std::regex line(R"re(^TL_PORTABLE_OP\("([^"]+)",)re");
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
    EXPECT_NE(k.function, nullptr);
    EXPECT_EQ(k.priority, KernelPriority::kPortable);
    EXPECT_EQ(k.key.num_tensors, 0u);
  }
  const std::set<std::string> expected = def_file_operators();
  EXPECT_GT(expected.size(), 4u);
  EXPECT_EQ(names, expected);
}

// What each kernel writes, as method load checks it against constants: out
// variants their out and return slot, multi-output ops every out,
// Tensor(a!) inputs by position, prim ops only their return slot.
TEST(PortableKernelsTest, WrittenArgumentsFollowTheSchemas) {
  auto written = [](const std::string& name) {
    for (const Kernel& k : portable_kernels()) {
      if (name == k.name) return k.written;
    }
    ADD_FAILURE() << "no kernel " << name;
    return WrittenArgs{};
  };
  auto mutated = [](const WrittenArgs& w) {
    std::vector<int> positions;
    for (size_t i = 0; i < w.num_mutated; ++i) positions.push_back(w.mutated[i]);
    return positions;
  };
  EXPECT_EQ(written("aten::add.out").trailing, 2);
  EXPECT_EQ(written("aten::div.out_mode").trailing, 2);
  EXPECT_EQ(written("aten::embedding.out").trailing, 2);
  EXPECT_EQ(written("aten::max.dim_max").trailing, 3);
  EXPECT_EQ(written("aten::topk.values").trailing, 3);
  EXPECT_EQ(written("aten::native_layer_norm.out").trailing, 4);
  EXPECT_EQ(written("aten::split_copy.Tensor_out").trailing, 1);
  EXPECT_EQ(written("aten::sym_size.int").trailing, 1);
  EXPECT_EQ(written("executorch_prim::add.Scalar").trailing, 1);
  EXPECT_EQ(written("executorch_prim::et_view.default").trailing, 1);
  EXPECT_THAT(mutated(written("aten::add.out")), ElementsAre());
  EXPECT_THAT(mutated(written("executorch_prim::et_copy_index.tensor")), ElementsAre(0));
  EXPECT_THAT(mutated(written("aten::_native_batch_norm_legit.out")), ElementsAre(3, 4));
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
  KernelContext ctx(nullptr, nullptr, (*add)->name);
  (*add)->function(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_THAT(out.values(), ElementsAre(2, 4));
}

TEST(PortableKernelsTest, RegisteringTwiceIsADuplicate) {
  StaticKernelRegistry<kRoom> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_EQ(register_portable_kernels(registry).code(), Error::kInvalidArgument);
}

TEST(PortableKernelsTest, FullRegistryIsOutOfResources) {
  StaticKernelRegistry<2> registry;
  EXPECT_EQ(register_portable_kernels(registry).code(), Error::kOutOfResources);
}

}  // namespace
}  // namespace torchlight
