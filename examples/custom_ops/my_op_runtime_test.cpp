// The runtime half of the example without PyTorch: a program calling
// my_ops::my_op.out (built here with the test .pte builder) runs through
// the default registry (Module(path)'s), which finds the kernel my_op.cpp registered with
// EXECUTORCH_LIBRARY. test_custom_ops_example.py runs the exported program.
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

#include "extension/data_loader/buffer_data_loader.h"
#include "kernels/all_kernels.h"
#include "runtime/executor/testing/pte_builder.h"

namespace {

using namespace torchlight::testing;
namespace fb = torchlight::fb;
using executorch::extension::Module;
using executorch::runtime::EValue;

// forward(x) = my_op(x, alpha) for float32[n].
std::vector<uint8_t> my_op_program(int32_t n, double alpha) {
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {n}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {n}, 1, 64));
  values.push_back(double_value(alpha));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("my_ops::my_op", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 2, 1, 1}));
  auto program = make_program("forward", std::move(values), {0}, {1}, std::move(ops), std::move(instructions),
                              {128});
  return pack(*program);
}

TEST(CustomOpsExample, TheLinkedKernelIsInTheDefaultRegistry) {
  auto registry = torchlight::all_kernels();
  ASSERT_TRUE(registry.ok());
  EXPECT_TRUE(registry.get()->has_kernel("my_ops::my_op.out"));
}

TEST(CustomOpsExample, ModuleRunsAProgramCallingIt) {
  std::vector<uint8_t> pte = my_op_program(4, 0.75);
  // The default registry (Module(path)'s), over bytes in memory.
  auto registry = torchlight::all_kernels();
  ASSERT_TRUE(registry.ok());
  Module module(std::make_unique<torchlight::BufferDataLoader>(pte.data(), pte.size(), "my_op"), *registry.get());
  const std::vector<float> x = {-3.0f, -0.5f, 0.0f, 2.0f};
  auto input = executorch::extension::make_tensor_ptr({4}, std::vector<float>(x));
  auto outputs = module.forward({EValue(*input)});
  ASSERT_TRUE(outputs.ok()) << outputs.status().message();
  const auto y = outputs.get()[0].toTensor();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(y.const_data_ptr<float>()[i], 0.75f * x[i] / (1.0f + std::fabs(x[i]))) << i;
  }
}

}  // namespace
