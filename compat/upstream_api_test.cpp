// Host code written the way upstream ExecuTorch's getting-started guide and
// API docs write it (their includes, namespaces and calls), built against
// compat/include: if this compiles and passes, such code runs on Torchlight.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/platform/runtime.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "runtime/executor/testing/upstream_fixtures.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace ::executorch::extension;
using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::testing::HasSubstr;

namespace {

using ::torchlight::testing::read_float_file;
using ::torchlight::testing::upstream_fixture;

// The guide's "Run the model" snippet, on upstream's XNNPACK-delegated MLP
// (its eager PyTorch output is the reference, 1e-4 relative).
TEST(UpstreamCppApi, GettingStartedForwardFromBlob) {
  ::executorch::runtime::runtime_init();
  Module module(upstream_fixture("mlp_xnnpack.pte"));
  std::vector<float> input = read_float_file(upstream_fixture("mlp_xnnpack.input0.bin"));
  const std::vector<float> expected = read_float_file(upstream_fixture("mlp_xnnpack.output0.bin"));
  ASSERT_EQ(input.size(), 32u);
  auto tensor = from_blob(input.data(), {2, 16});
  const auto result = module.forward(tensor);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Tensor out = result->at(0).toTensor();
  ASSERT_EQ(out.numel(), 8);
  const auto output = out.const_data_ptr<float>();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(output[i], expected[i], 1e-4 * (1.0 + std::fabs(expected[i]))) << i;
  }
}

// add.pte computes a + b; inputs as owning TensorPtrs, a brace list of them,
// and the Error-code comparisons upstream's calls are written with.
TEST(UpstreamCppApi, MakeTensorPtrAndErrorCodes) {
  Module module(upstream_fixture("add.pte"), Module::LoadMode::File);
  EXPECT_TRUE(module.load() == Error::Ok);
  EXPECT_TRUE(module.is_loaded());
  const auto names = module.method_names();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->count("forward"), 1u);
  EXPECT_TRUE(module.load_forward() == Error::Ok);

  auto a = make_tensor_ptr({1}, {2.5f});
  auto b = make_tensor_ptr({1}, {4.0f});
  const auto result = module.forward({a, b});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_FLOAT_EQ(result->at(0).toTensor().const_data_ptr<float>()[0], 6.5f);
  EXPECT_TRUE(result->at(0).isTensor());

  // A wrong dtype is an error, not a crash, and names the input.
  auto wrong = make_tensor_ptr({1}, std::vector<int64_t>{1});
  const auto bad = module.forward({a, wrong});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), Error::InvalidType);
  EXPECT_THAT(bad.status().message(), HasSubstr("input 1"));
}

// set_input / execute() / get_output, set_output's refusal of planned
// outputs, and unload_method, as upstream's Module documents them.
TEST(UpstreamCppApi, SetInputsThenExecuteAndReadOutputs) {
  Module module(upstream_fixture("add.pte"));
  auto a = full({1}, 1.5);
  EXPECT_TRUE(module.set_input(a, 0) == Error::Ok);
  // Input 1 was never set: a clear error naming it.
  const auto unset = module.execute("forward");
  ASSERT_FALSE(unset.ok());
  EXPECT_THAT(unset.status().message(), HasSubstr("input 1 of method 'forward' was never set"));

  EXPECT_TRUE(module.set_input(ones({1}), 1) == Error::Ok);
  ASSERT_TRUE(module.forward().ok());
  const auto out = module.get_output();
  ASSERT_TRUE(out.ok());
  EXPECT_FLOAT_EQ(out->toTensor().const_data_ptr<float>()[0], 2.5f);

  // Replacing one input keeps the other.
  const auto again = module.execute("forward", {EValue(), full({1}, 10.0)});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FLOAT_EQ(again->at(0).toTensor().const_data_ptr<float>()[0], 11.5f);

  // add.pte's output lives in planned memory; as upstream, it cannot be
  // redirected (set_output is for outputs the program leaves unplanned).
  float into = 0;
  const auto redirect = module.set_output(from_blob(&into, {1}));
  EXPECT_TRUE(redirect != Error::Ok);
  EXPECT_THAT(redirect.message(), HasSubstr("output 0 already has planned memory"));

  EXPECT_TRUE(module.unload_method("forward"));
  EXPECT_FALSE(module.is_method_loaded("forward"));
  EXPECT_FALSE(module.unload_method("forward"));
  EXPECT_FALSE(module.get_outputs("forward").ok());
}

TEST(UpstreamCppApi, TensorPtrMakers) {
  auto z = zeros({2, 3}, ScalarType::Int);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->scalar_type(), ScalarType::Int);
  EXPECT_EQ(z->numel(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->const_data_ptr<int32_t>()[i], 0);

  auto f = full({3}, 2.5, ScalarType::Double);
  EXPECT_EQ(f->const_data_ptr<double>()[2], 2.5);

  // Converted on the way in, as upstream converts to the requested type.
  auto converted = make_tensor_ptr({3}, std::vector<int32_t>{1, 2, 3}, {}, {}, ScalarType::Float);
  ASSERT_NE(converted, nullptr);
  EXPECT_EQ(converted->const_data_ptr<float>()[2], 3.0f);

  auto r = rand({1000});
  for (int i = 0; i < 1000; ++i) {
    const float v = r->const_data_ptr<float>()[i];
    EXPECT_TRUE(v >= 0.0f && v < 1.0f) << v;
  }
  auto ints = randint(-3, 3, {500});
  for (int i = 0; i < 500; ++i) {
    const int64_t v = ints->const_data_ptr<int64_t>()[i];
    EXPECT_TRUE(v >= -3 && v < 3) << v;
  }

  auto clone = clone_tensor_ptr(f);
  ASSERT_NE(clone, nullptr);
  EXPECT_NE(clone->const_data_ptr<double>(), f->const_data_ptr<double>());
  EXPECT_EQ(clone->const_data_ptr<double>()[0], 2.5);

  auto like = zeros_like(f);
  EXPECT_EQ(like->scalar_type(), ScalarType::Double);
  EXPECT_EQ(like->numel(), 3);

  auto scalar = make_tensor_ptr(7.0f);
  EXPECT_EQ(scalar->dim(), 0u);
  EXPECT_EQ(scalar->const_data_ptr<float>()[0], 7.0f);

  // Bad arguments give a null TensorPtr (upstream aborts), which an input
  // slot refuses with an error.
  EXPECT_EQ(make_tensor_ptr({2, 2}, {1.0f, 2.0f}), nullptr);
  EXPECT_EQ(from_blob(nullptr, {-1}), nullptr);
  Module module(upstream_fixture("add.pte"));
  const auto refused = module.forward({TensorPtr(), TensorPtr()});
  ASSERT_FALSE(refused.ok());
}

}  // namespace
