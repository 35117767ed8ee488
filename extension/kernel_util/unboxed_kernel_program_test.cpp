// An unboxed kernel inside a program: run through Module, and a call whose
// arguments do not fit the derived schema refused at method load, naming the
// operator and the argument.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "extension/data_loader/buffer_data_loader.h"
#include "extension/kernel_util/unboxed_kernel.h"
#include "extension/module/module.h"
#include "extension/tensor/tensor_ptr.h"
#include "runtime/core/testing/error_matchers.h"
#include "runtime/executor/testing/pte_builder.h"

namespace torchlight {
namespace {

using namespace torchlight::testing;

// out = a * scale + shift, elementwise (float32).
Tensor& affine_out(KernelContext& ctx, const Tensor& a, double scale, int64_t shift, Tensor& out) {
  if (a.numel() != out.numel()) {
    ctx.fail(Status::error(Error::kInvalidArgument, "affine: size mismatch"));
    return out;
  }
  for (int64_t i = 0; i < a.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] =
        a.const_data_ptr<float>()[i] * static_cast<float>(scale) + static_cast<float>(shift);
  }
  return out;
}

const UnboxedKernel kAffine{"test_ops::affine.out", unboxed<&affine_out>};

// values: 0 a float[3], 1 out float[3], 2 `scale`, 3 `shift`; the call passes
// `args` (default: a, scale, shift, out, out-as-return).
std::vector<uint8_t> affine_program(fb::EValueT scale, fb::EValueT shift,
                                    std::vector<int32_t> args = {0, 2, 3, 1, 1}) {
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {3}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {3}, 1, 16));
  values.push_back(std::move(scale));
  values.push_back(std::move(shift));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("test_ops::affine", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, std::move(args)));
  auto program = make_program("forward", std::move(values), {0}, {1}, std::move(ops), std::move(instructions),
                              {32});
  return pack(*program);
}

struct Loaded {
  explicit Loaded(std::vector<uint8_t> pte) : bytes(std::move(pte)) {
    EXPECT_TRUE(registry.register_kernel(kAffine.kernel()).ok());
    module = std::make_unique<Module>(std::make_unique<BufferDataLoader>(bytes.data(), bytes.size(), "affine"),
                                      registry);
  }
  std::vector<uint8_t> bytes;
  StaticKernelRegistry<4> registry;
  std::unique_ptr<Module> module;
};

TEST(UnboxedKernelProgramTest, RunsInAProgram) {
  Loaded l(affine_program(double_value(2.0), int_value(-1)));
  auto x = make_tensor_ptr({3}, std::vector<float>{1.0f, 2.5f, -3.0f});
  auto outputs = l.module->forward({EValue(*x)});
  ASSERT_TRUE(outputs.ok()) << outputs.status().message();
  const Tensor y = outputs.get()[0].to_tensor();
  const float expected[] = {1.0f, 4.0f, -7.0f};
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(y.const_data_ptr<float>()[i], expected[i]);
}

TEST(UnboxedKernelProgramTest, WrongKindIsRefusedAtLoadNamingTheArgument) {
  // scale given as an Int where the function takes a double.
  Loaded l(affine_program(int_value(2), int_value(-1)));
  EXPECT_THAT(l.module->load_method("forward"), ErrorIs(Error::kInvalidType, "arg1"));
  EXPECT_THAT(l.module->load_method("forward"), ErrorIs(Error::kInvalidType, "(Tensor arg0, float arg1, int arg2"));
  EXPECT_THAT(l.module->load_method("forward"), ErrorIs(Error::kInvalidType, "test_ops::affine.out"));
}

TEST(UnboxedKernelProgramTest, WrongCountIsRefusedAtLoad) {
  Loaded l(affine_program(double_value(2.0), int_value(-1), {0, 2, 1, 1}));
  EXPECT_THAT(l.module->load_method("forward"), ErrorIs(Error::kInvalidArgument, "expected 5 arguments"));
}

TEST(UnboxedKernelProgramTest, ConstantInTheWrittenArgumentIsRefusedAtLoad) {
  // out (value 1) replaced by a constant tensor: the derived schema marks
  // the Tensor& parameter written.
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {3}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {3}, 0, 0, 1));  // constant buffer 1
  values.push_back(double_value(2.0));
  values.push_back(int_value(0));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("test_ops::affine", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 2, 3, 1, 1}));
  auto program = make_program("forward", std::move(values), {0}, {1}, std::move(ops), std::move(instructions), {16});
  program->constant_buffer.push_back(std::make_unique<fb::BufferT>());  // index 0: reserved
  auto data = std::make_unique<fb::BufferT>();
  data->storage.resize(12);
  program->constant_buffer.push_back(std::move(data));
  Loaded l(pack(*program));
  EXPECT_THAT(l.module->load_method("forward"), ErrorIs(Error::kInvalidProgram, "out"));
}

}  // namespace
}  // namespace torchlight
