// For every kernel of every library and every argument its schema marks as
// written (outs, return slots, KV caches, batch norm's running stats, the
// Tensor(a!) inputs of in-place ops), a program passing a constant there is
// refused at method load; the same call with planned memory there loads.
// The constant would otherwise be written through, and a constant may be a
// read-only mapping of the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "extension/data_loader/buffer_data_loader.h"
#include "kernels/all_kernels.h"
#include "runtime/executor/program.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/test_kernels.h"

namespace torchlight {
namespace {

using ::testing::HasSubstr;
using namespace torchlight::testing;  // NOLINT: test builders.

// add_eh.pte's value 0 is a constant float tensor in its constant segment;
// the calls below reuse it and append their own values.
constexpr int32_t kConstant = 0;

fb::EValueT int_list_value(std::vector<int64_t> items) {
  fb::IntListT list;
  list.items = std::move(items);
  fb::EValueT e;
  e.val.Set(std::move(list));
  return e;
}

// Appends one value for a schema argument of `type` and returns its index:
// a planned float tensor, or a value of the kind the schema asks for.
// `constant_here` puts the constant tensor there instead (inside the list
// for list arguments).
int32_t add_argument(fb::ProgramT& program, ArgType type, bool constant_here) {
  auto& values = program.execution_plan[0]->values;
  auto push = [&](fb::EValueT v) {
    values.push_back(std::make_unique<fb::EValueT>(std::move(v)));
    return static_cast<int32_t>(values.size() - 1);
  };
  auto planned_tensor = [&] { return push(tensor_value(fb::ScalarType::FLOAT, {1}, 1, 0)); };
  switch (type) {
    case ArgType::kTensor:
    case ArgType::kOptionalTensor:
    case ArgType::kReturn:
      return constant_here ? kConstant : planned_tensor();
    case ArgType::kTensorList:
    case ArgType::kOptionalTensorList: {
      const int32_t item = constant_here ? kConstant : planned_tensor();
      fb::EValueT e;
      if (type == ArgType::kTensorList) {
        fb::TensorListT list;
        list.items = {item};
        e.val.Set(std::move(list));
      } else {
        fb::OptionalTensorListT list;
        list.items = {item};
        e.val.Set(std::move(list));
      }
      return push(std::move(e));
    }
    case ArgType::kScalar:
    case ArgType::kOptionalScalar:
    case ArgType::kInt:
    case ArgType::kOptionalInt:
      return push(int_value(1));
    case ArgType::kDouble:
    case ArgType::kOptionalDouble:
      return push(double_value(1.0));
    case ArgType::kBool:
    case ArgType::kOptionalBool:
      return push(bool_value(false));
    case ArgType::kIntList:
    case ArgType::kOptionalIntList: {
      const int32_t one = push(int_value(1));
      return push(int_list_value({one}));
    }
    case ArgType::kDoubleList:
    case ArgType::kOptionalDoubleList: {
      fb::DoubleListT list;
      list.items = {1.0};
      fb::EValueT e;
      e.val.Set(std::move(list));
      return push(std::move(e));
    }
    case ArgType::kBoolList: {
      fb::BoolListT list;
      list.items = {false};
      fb::EValueT e;
      e.val.Set(std::move(list));
      return push(std::move(e));
    }
    case ArgType::kString:
    case ArgType::kOptionalString: {
      fb::StringT s;
      s.string_val = "none";
      fb::EValueT e;
      e.val.Set(std::move(s));
      return push(std::move(e));
    }
  }
  return -1;
}

// add_eh.pte with its one instruction replaced by a call to `kernel`, the
// constant at argument `constant_at` (or nowhere, for -1).
std::vector<uint8_t> program_calling(const Kernel& kernel, int constant_at) {
  auto program = unpack(read_fixture("add_eh.pte"));
  const std::string name = kernel.name;
  const size_t dot = name.rfind('.');
  const bool has_overload = dot != std::string::npos && dot > name.rfind(':');
  auto& plan = *program->execution_plan[0];
  plan.operators.clear();
  plan.operators.push_back(
      op(has_overload ? name.substr(0, dot) : name, has_overload ? name.substr(dot + 1) : ""));
  std::vector<int32_t> args;
  for (size_t i = 0; i < kernel.schema->num_args; ++i) {
    args.push_back(add_argument(*program, kernel.schema->args[i].type,
                                static_cast<int>(i) == constant_at));
  }
  auto& instructions = plan.chains[0]->instructions;
  instructions.clear();
  instructions.push_back(std::make_unique<fb::InstructionT>(kernel_call(0, args)));
  return pack(*program, {{0, 0, 128, 63}});
}

Status load(const std::vector<uint8_t>& bytes, const KernelRegistry& kernels) {
  BufferDataLoader loader(bytes.data(), bytes.size(), "written.pte");
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return program.status();
  Result<MethodMeta> meta = program->method_meta("forward");
  if (!meta.ok()) return meta.status();
  std::vector<size_t> sizes;
  for (size_t i = 0; i < meta->num_planned_buffers(); ++i) {
    sizes.push_back(static_cast<size_t>(meta->planned_buffer_size(i).get()));
  }
  TestMemory memory(sizes, 16 << 20);  // Room for the matmuls' gemm scratch.
  return program->load_method("forward", &memory.manager, kernels).status();
}

TEST(WrittenConstantTest, EveryWrittenArgumentOfEveryKernelRefusesAConstant) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  size_t checked = 0;
  size_t prepare_refused = 0;
  // The program loads whichever kernel of that name the registry resolves
  // (an optimized one over a portable one), so what counts is whether any
  // kernel of the name has a prepare step.
  auto some_kernel_prepares = [&](const char* name) {
    for (const Kernel& k : registry.get()->kernels()) {
      if (std::strcmp(k.name, name) == 0 && k.prepare != nullptr) return true;
    }
    return false;
  };
  for (const Kernel& kernel : registry.get()->kernels()) {
    SCOPED_TRACE(kernel.name);
    const Status control = load(program_calling(kernel, -1), *registry.get());
    // Every tensor here is float32 and every scalar zero. A kernel whose
    // prepare step checks dtypes and values at load (bitwise ops, sdpa's
    // input_pos, the quantized library) may refuse the control with its own
    // argument error, never the written-constant one: the written-argument
    // check runs first, before any prepare step.
    if (!control.ok() && some_kernel_prepares(kernel.name)) {
      EXPECT_THAT(control.message(), ::testing::Not(HasSubstr("constant tensor value")));
      ++prepare_refused;
    } else {
      ASSERT_TRUE(control.ok()) << control.message();
    }
    for (size_t i = 0; i < kernel.schema->num_args; ++i) {
      if (!kernel.schema->args[i].written) continue;
      SCOPED_TRACE("argument " + std::to_string(i));
      const Status refused = load(program_calling(kernel, static_cast<int>(i)), *registry.get());
      EXPECT_EQ(refused.code(), Error::kInvalidProgram) << refused.message();
      EXPECT_THAT(refused.message(), HasSubstr("constant tensor value 0, but the kernel writes "
                                               "that argument"));
      EXPECT_THAT(refused.message(), HasSubstr("argument " + std::to_string(i) + " of '" +
                                               std::string(kernel.name) + "'"));
      ++checked;
    }
  }
  // Every out variant writes at least its out: the loop must have run.
  EXPECT_GT(checked, registry.get()->kernels().size());
  // Most kernels take the all-float control: the check above stays a check.
  // (The share refused at load grows as prepare steps check more: 58 of 272
  // when the index, shape and matmul kernels gained theirs, 80 when the
  // reductions and index.Tensor did: an all-float call has the wrong dtype
  // for argmax's out, any's out, index's indices...; 116 of about 280 when
  // the remaining portable kernels did: a [1] call has the wrong rank for
  // the pads, tril, the matrix products, and float indices for sort/topk;
  // 138 of 276 when the last 22 did: the pools' and upsamplings' ranks,
  // index_select's and scatter's float index, nonzero's float out.)
  EXPECT_LT(prepare_refused, registry.get()->kernels().size() * 2 / 3);
}

// The named cases the issue lists, so a schema regression in one of them
// reads plainly in the test output.
TEST(WrittenConstantTest, KvCachesAndRunningStatsAreWritten) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok());
  auto written = [&](const char* op, size_t arg) {
    for (const Kernel& kernel : registry.get()->kernels()) {
      if (std::string(kernel.name) == op) return kernel.schema->args[arg].written;
    }
    ADD_FAILURE() << "no kernel " << op;
    return false;
  };
  EXPECT_TRUE(written("torchlight::sdpa_with_kv_cache.out", 3));  // key_cache
  EXPECT_TRUE(written("torchlight::sdpa_with_kv_cache.out", 4));  // value_cache
  EXPECT_FALSE(written("torchlight::sdpa_with_kv_cache.out", 0));
  EXPECT_TRUE(written("aten::_native_batch_norm_legit.out", 3));  // running_mean
  EXPECT_TRUE(written("aten::_native_batch_norm_legit.out", 4));  // running_var
  EXPECT_TRUE(written("aten::native_batch_norm.out", 3));
  EXPECT_TRUE(written("aten::native_batch_norm.out", 4));
  EXPECT_FALSE(written("aten::_native_batch_norm_legit_no_training.out", 3));
}

}  // namespace
}  // namespace torchlight
