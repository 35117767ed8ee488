// XnnpackBackend end to end: upstream's release-0.5 MLP program through
// Module, and the same graph built here in header and legacy payloads.
#include "backends/xnnpack/xnnpack_backend.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"
#include "extension/module/module.h"
#include "kernels/all_kernels.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/upstream_fixtures.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::torchlight::testing::read_float_file;
using ::torchlight::testing::upstream_fixture;

// Every kernel library, for the non-delegated parts of the programs.
const KernelRegistry& kernels() {
  Result<const KernelRegistry*> registry = all_kernels();
  EXPECT_TRUE(registry.ok()) << registry.status().message();
  return *registry.get();
}

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

// Largest |a - b| relative to the largest |b|: the fixture tolerance is
// 1e-4 of the output's magnitude.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return worst / std::max(scale, 1e-30);
}

TEST(XnnpackBackendTest, RunsUpstreamMlpProgramWithinToleranceOfEager) {
  BackendRegistry registry;
  ASSERT_TRUE(register_xnnpack_backend(registry).ok());
  Module module(upstream_fixture("mlp_xnnpack.pte"), Module::LoadMode::kFile,
                kernels(), &registry);
  const std::vector<float> x = read_float_file(upstream_fixture("mlp_xnnpack.input0.bin"));
  const std::vector<float> expected = read_float_file(upstream_fixture("mlp_xnnpack.output0.bin"));
  ASSERT_EQ(x.size(), 32u);
  ASSERT_EQ(expected.size(), 8u);
  OwnedTensor input = float_tensor({2, 16}, x);
  // Twice: the second run reuses the runtime built at load.
  for (int run = 0; run < 2; ++run) {
    auto outputs = module.forward({input.evalue()});
    ASSERT_TRUE(outputs.ok()) << outputs.status().message();
    ASSERT_EQ(outputs->size(), 1u);
    const Tensor y = (*outputs)[0].to_tensor();
    ASSERT_EQ(y.dim(), 2u);
    EXPECT_EQ(y.size(0), 2);
    EXPECT_EQ(y.size(1), 4);
    std::vector<float> got(y.const_data_ptr<float>(), y.const_data_ptr<float>() + 8);
    EXPECT_LT(relative_error(got, expected), 1e-4);
  }
}

TEST(XnnpackBackendTest, ProgramWithoutRegisteredBackendNamesIt) {
  BackendRegistry registry;
  Module module(upstream_fixture("mlp_xnnpack.pte"), Module::LoadMode::kFile,
                kernels(), &registry);
  Status status = module.load_method("forward");
  EXPECT_THAT(status, ErrorIs(Error::kBackendMissing, "XnnpackBackend"));
}

// relu(x W1^T + b1) W2^T + b2, computed directly.
std::vector<float> mlp_reference(const std::vector<float>& x, size_t rows, const std::vector<float>& w1,
                                 const std::vector<float>& b1, const std::vector<float>& w2,
                                 const std::vector<float>& b2, size_t in, size_t hidden,
                                 size_t out) {
  std::vector<float> h(rows * hidden), y(rows * out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < hidden; ++j) {
      double acc = b1[j];
      for (size_t k = 0; k < in; ++k) acc += double{x[r * in + k]} * w1[j * in + k];
      h[r * hidden + j] = static_cast<float>(std::max(acc, 0.0));
    }
    for (size_t j = 0; j < out; ++j) {
      double acc = b2[j];
      for (size_t k = 0; k < hidden; ++k) acc += double{h[r * hidden + k]} * w2[j * hidden + k];
      y[r * out + j] = static_cast<float>(acc);
    }
  }
  return y;
}

struct Mlp {
  PayloadBuilder builder;
  std::vector<float> w1 = random_values(8 * 6, 1), b1 = random_values(8, 2);
  std::vector<float> w2 = random_values(3 * 8, 3), b2 = random_values(3, 4);
  Mlp() {
    const uint32_t x = builder.input({5, 6}, 0);
    const uint32_t w1_id = builder.constant_f32({8, 6}, w1);
    const uint32_t b1_id = builder.constant_f32({8}, b1);
    const uint32_t h = builder.internal({5, 8});
    const uint32_t w2_id = builder.constant_f32({3, 8}, w2);
    const uint32_t b2_id = builder.constant_f32({3}, b2);
    const uint32_t y = builder.output({5, 3}, 1);
    auto* fc1 = builder.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc1->input1_id = x, fc1->filter_id = w1_id, fc1->bias_id = b1_id, fc1->output_id = h;
    builder.clamp_last(0.0f, INFINITY);
    auto* fc2 = builder.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc2->input1_id = h, fc2->filter_id = w2_id, fc2->bias_id = b2_id, fc2->output_id = y;
  }
};

void expect_mlp_runs(const std::vector<uint8_t>& payload, const Mlp& mlp) {
  LoadedDelegate delegate(payload);
  ASSERT_TRUE(delegate.status().ok()) << delegate.status().message();
  // Rows 5, then fewer (dynamic reshape of the input), then 5 again.
  for (size_t rows : {5u, 1u, 3u, 5u}) {
    const std::vector<float> x = random_values(rows * 6, 10 + rows);
    OwnedTensor in = float_tensor({static_cast<SizesType>(rows), 6}, x);
    Result<OwnedTensor> out = OwnedTensor::make(ScalarType::kFloat, {5, 3},
                                                TensorShapeDynamism::kDynamicBound);
    ASSERT_TRUE(out.ok());
    Status s = delegate.execute({in.evalue(), out->evalue()});
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(out->tensor().size(0), static_cast<SizesType>(rows));
    const auto expected = mlp_reference(x, rows, mlp.w1, mlp.b1, mlp.w2, mlp.b2, 6, 8, 3);
    EXPECT_LT(relative_error(values_of(*out), expected), 1e-5) << rows << " rows";
  }
}

TEST(XnnpackBackendTest, HeaderPayloadMatchesReferenceAndReshapesPerCall) {
  Mlp mlp;
  expect_mlp_runs(mlp.builder.build(), mlp);
}

TEST(XnnpackBackendTest, LegacyHeaderlessPayloadReadsConstantBuffers) {
  Mlp mlp;
  expect_mlp_runs(mlp.builder.build_legacy(), mlp);
}

TEST(XnnpackBackendTest, NewBuffersOfTheSameShapeAreRebound) {
  // Same shapes skip the reshape; new data pointers must still be seen.
  Mlp mlp;
  const auto payload = mlp.builder.build();
  LoadedDelegate delegate(payload);
  ASSERT_TRUE(delegate.status().ok());
  for (uint32_t seed : {20u, 21u, 22u}) {
    const std::vector<float> x = random_values(5 * 6, seed);
    OwnedTensor in = float_tensor({5, 6}, x);
    OwnedTensor out = float_tensor({5, 3});
    ASSERT_TRUE(delegate.execute({in.evalue(), out.evalue()}).ok());
    const auto expected = mlp_reference(x, 5, mlp.w1, mlp.b1, mlp.w2, mlp.b2, 6, 8, 3);
    EXPECT_LT(relative_error(values_of(out), expected), 1e-5) << seed;
  }
  // A failed call (wrong shape) leaves the delegate usable.
  OwnedTensor bad = float_tensor({5, 9});
  Result<OwnedTensor> out =
      OwnedTensor::make(ScalarType::kFloat, {5, 3}, TensorShapeDynamism::kDynamicBound);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(delegate.execute({bad.evalue(), out->evalue()}).ok());
  const std::vector<float> x = random_values(2 * 6, 23);
  OwnedTensor in = float_tensor({2, 6}, x);
  ASSERT_TRUE(delegate.execute({in.evalue(), out->evalue()}).ok());
  ASSERT_EQ(out->tensor().size(0), 2);
  const auto expected = mlp_reference(x, 2, mlp.w1, mlp.b1, mlp.w2, mlp.b2, 6, 8, 3);
  EXPECT_LT(relative_error(values_of(*out), expected), 1e-5);
}

TEST(XnnpackBackendTest, WrongInputDtypeIsNamed) {
  Mlp mlp;
  const auto payload = mlp.builder.build();
  LoadedDelegate delegate(payload);
  ASSERT_TRUE(delegate.status().ok());
  Result<OwnedTensor> in = OwnedTensor::make(ScalarType::kInt, {5, 6});
  OwnedTensor out = float_tensor({5, 3});
  Status s = delegate.execute({in->evalue(), out.evalue()});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "input 0"));
}

TEST(XnnpackBackendTest, MissingArgumentIsNamed) {
  Mlp mlp;
  const auto payload = mlp.builder.build();
  LoadedDelegate delegate(payload);
  ASSERT_TRUE(delegate.status().ok());
  OwnedTensor in = float_tensor({5, 6});
  Status s = delegate.execute({in.evalue()});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "output 1 is missing"));
}

TEST(XnnpackBackendTest, InputWithWrongInnerSizeIsRejected) {
  Mlp mlp;
  const auto payload = mlp.builder.build();
  LoadedDelegate delegate(payload);
  ASSERT_TRUE(delegate.status().ok());
  OwnedTensor in = float_tensor({5, 7});
  OwnedTensor out = float_tensor({5, 3});
  Status s = delegate.execute({in.evalue(), out.evalue()});
  EXPECT_THAT(s,
              ErrorIs(Error::kInvalidArgument,
                      "has size 7 in dim 1; the payload allows at most 6"));
}

// One fully-connected layer as a payload: x [rows, in] -> y [rows, out].
std::vector<uint8_t> linear_payload(const std::vector<float>& w, const std::vector<float>& bias,
                                    uint32_t rows, uint32_t in, uint32_t out) {
  PayloadBuilder b;
  const uint32_t x = b.input({rows, in}, 0);
  const uint32_t wid = b.constant_f32({out, in}, w);
  const uint32_t bid = b.constant_f32({out}, bias);
  const uint32_t y = b.output({rows, out}, 1);
  auto* fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc->input1_id = x, fc->filter_id = wid, fc->bias_id = bid, fc->output_id = y;
  return b.build();
}

TEST(XnnpackBackendTest, MixedProgramAlternatesDelegatesAndPortableKernels) {
  // forward(x) = fc2(2 * fc1(x)): fc1 and fc2 are XNNPACK delegates (payloads
  // in segments 0 and 1), the doubling is the portable add kernel between.
  namespace pb = ::torchlight::testing;
  using ::torchlight::fb::ScalarType;
  const auto w1 = random_values(8 * 6, 90), b1 = random_values(8, 91);
  const auto w2 = random_values(3 * 8, 92), b2 = random_values(3, 93);
  std::vector<::torchlight::fb::EValueT> values;
  values.push_back(pb::tensor_value(ScalarType::FLOAT, {4, 6}, 1, 0));    // 0 x
  values.push_back(pb::tensor_value(ScalarType::FLOAT, {4, 8}, 1, 96));   // 1 h
  values.push_back(pb::tensor_value(ScalarType::FLOAT, {4, 8}, 1, 224));  // 2 r
  values.push_back(pb::tensor_value(ScalarType::FLOAT, {4, 3}, 1, 352));  // 3 y
  values.push_back(pb::int_value(1));                                      // 4 alpha
  std::vector<std::unique_ptr<::torchlight::fb::OperatorT>> ops;
  ops.push_back(pb::op("aten::add", "out"));
  std::vector<::torchlight::fb::InstructionT> instructions;
  instructions.push_back(pb::delegate_call(0, {0, 1}));
  instructions.push_back(pb::kernel_call(0, {1, 1, 4, 2, 2}));
  instructions.push_back(pb::delegate_call(1, {2, 3}));
  auto program = pb::make_program("forward", std::move(values), {0}, {3}, std::move(ops),
                                  std::move(instructions), {400});
  for (uint32_t i = 0; i < 2; ++i) {
    auto delegate = std::make_unique<::torchlight::fb::BackendDelegateT>();
    delegate->id = kXnnpackBackendId;
    delegate->processed = std::make_unique<::torchlight::fb::BackendDelegateDataReferenceT>();
    delegate->processed->location = ::torchlight::fb::DataLocation::SEGMENT;
    delegate->processed->index = i;
    program->execution_plan[0]->delegates.push_back(std::move(delegate));
  }
  const auto bytes = pb::pack(*program, {linear_payload(w1, b1, 4, 6, 8),
                                         linear_payload(w2, b2, 4, 8, 3)});
  const std::string path = ::testing::TempDir() + "/xnnpack_mixed.pte";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  BackendRegistry registry;
  ASSERT_TRUE(register_xnnpack_backend(registry).ok());
  Module module(path, Module::LoadMode::kFile, kernels(), &registry);
  const auto x = random_values(4 * 6, 94);
  OwnedTensor input = float_tensor({4, 6}, x);
  auto outputs = module.forward({input.evalue()});
  ASSERT_TRUE(outputs.ok()) << outputs.status().message();
  const Tensor y = (*outputs)[0].to_tensor();
  std::vector<float> got(y.const_data_ptr<float>(), y.const_data_ptr<float>() + 12);
  // Reference: the same three steps in double precision.
  std::vector<float> h(4 * 8), want(4 * 3);
  for (size_t r = 0; r < 4; ++r)
    for (size_t o = 0; o < 8; ++o) {
      double acc = b1[o];
      for (size_t k = 0; k < 6; ++k) acc += double{x[r * 6 + k]} * w1[o * 6 + k];
      h[r * 8 + o] = static_cast<float>(2 * acc);
    }
  for (size_t r = 0; r < 4; ++r)
    for (size_t o = 0; o < 3; ++o) {
      double acc = b2[o];
      for (size_t k = 0; k < 8; ++k) acc += double{h[r * 8 + k]} * w2[o * 8 + k];
      want[r * 3 + o] = static_cast<float>(acc);
    }
  EXPECT_LT(relative_error(got, want), 1e-5);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
