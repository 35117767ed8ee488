// Method: loading, inputs, the five instruction kinds, delegates, dynamic
// shapes, mutable state, and load-time errors.
#include "runtime/executor/method.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "extension/data_loader/buffer_data_loader.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/core/event_tracer.h"
#include "runtime/executor/program.h"
#include "runtime/executor/testing/loaded_program.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/test_kernels.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;
using namespace torchlight::testing;  // NOLINT: test builders.

// A float tensor over caller memory, for inputs.
struct FloatTensor {
  explicit FloatTensor(std::vector<float> values, std::vector<int32_t> shape)
      : data(std::move(values)), sizes(std::move(shape)), dim_order(sizes.size()), strides(sizes.size()) {
    for (size_t i = 0; i < dim_order.size(); ++i) dim_order[i] = static_cast<uint8_t>(i);
    compute_strides({sizes.data(), sizes.size()}, {dim_order.data(), dim_order.size()}, strides.data());
    impl = std::make_unique<TensorImpl>(ScalarType::kFloat, sizes.size(), sizes.data(), data.data(),
                                        dim_order.data(), strides.data());
  }
  EValue value() const { return EValue(Tensor(impl.get())); }
  std::vector<float> data;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int64_t> strides;
  std::unique_ptr<TensorImpl> impl;
};

std::vector<float> values_of(const EValue& v) {
  const Tensor t = v.to_tensor();
  return std::vector<float>(t.const_data_ptr<float>(), t.const_data_ptr<float>() + t.numel());
}

TEST(MethodTest, RunsAddFixture) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("add.pte")).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor a({1.5f}, {1});
  FloatTensor b({2.25f}, {1});
  ASSERT_TRUE(method->set_input(0, a.value()).ok());
  ASSERT_TRUE(method->set_input(1, b.value()).ok());
  Status status = method->execute();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({3.75f}));
}

TEST(MethodTest, RunsConstantSegmentFixture) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("add_eh.pte")).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2, 3}, {3});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({2, 3, 4}));
}

TEST(MethodTest, RunsLegacyConstantBufferFixtureRepeatedly) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("linear_constant_buffer.pte")).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  for (float base : {0.0f, 1.0f, -2.5f}) {
    FloatTensor x({base, base + 1, base + 2, base + 3}, {2, 2});
    ASSERT_TRUE(method->set_input(0, x.value()).ok());
    ASSERT_TRUE(method->execute().ok());
    const auto out = values_of(*method->output(0).get());
    ASSERT_EQ(out.size(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 3 * x.data[i] + 2);
  }
}

// Records every hook call as text.
class RecordingTracer : public EventTracer {
 public:
  EventTracerEntry begin_method(const char* name, bool is_load) override {
    events.push_back(std::string(is_load ? "load " : "run ") + name);
    return {++next_id, 0};
  }
  void end_method(EventTracerEntry entry) override {
    events.push_back("end method " + std::to_string(entry.id));
  }
  EventTracerEntry begin_instruction(size_t chain, size_t index, const char* name,
                                     InstructionKind) override {
    events.push_back("instruction " + std::to_string(chain) + ":" + std::to_string(index) + " " + name);
    return {++next_id, 0};
  }
  void end_instruction(EventTracerEntry entry) override {
    events.push_back("end instruction " + std::to_string(entry.id));
  }
  void log_value(size_t value_index, const EValue& value) override {
    events.push_back("value " + std::to_string(value_index) + " " + to_string(value.tag()));
  }
  void log_output(size_t index, const EValue& value) override {
    events.push_back("output " + std::to_string(index) + " " + to_string(value.tag()));
  }
  std::vector<std::string> events;
  uint64_t next_id = 0;
};

TEST(MethodTest, EventTracerSeesLoadRunAndEachInstruction) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("linear_constant_buffer.pte")).ok());
  RecordingTracer tracer;
  auto meta = l.program->method_meta("forward");
  TestMemory memory({static_cast<size_t>(meta->planned_buffer_size(0).get())});
  auto method = l.program->load_method("forward", &memory.manager, l.kernels, nullptr, &tracer);
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2, 3, 4}, {2, 2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  const std::vector<std::string> expected = {
      "load forward", "end method 1",
      "run forward",
      "instruction 0:0 aten::mul.out", "end instruction 3", "value 3 Tensor",
      "instruction 0:1 aten::add.out", "end instruction 4", "value 0 Tensor",
      "output 0 Tensor", "end method 2"};
  // Value indices depend on the fixture's layout; check the shape of the
  // sequence and the operators, not the exact value numbers.
  ASSERT_EQ(tracer.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i].rfind("value", 0) == 0) {
      EXPECT_EQ(tracer.events[i].rfind("value ", 0), 0u);
      EXPECT_NE(tracer.events[i].find("Tensor"), std::string::npos);
    } else {
      EXPECT_EQ(tracer.events[i], expected[i]) << i;
    }
  }
}

TEST(MethodTest, InputErrorsNameTheInputAndBothSides) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("add_eh.pte")).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok());

  // Not set yet.
  Status not_set = method->execute();
  EXPECT_THAT(not_set, ErrorIs(Error::kInvalidState, "input 0 was not set"));
  EXPECT_THAT(not_set.message(), HasSubstr("input 0 was not set"));

  // Wrong dtype.
  int64_t ints[3] = {1, 2, 3};
  int32_t sizes[1] = {3};
  uint8_t order[1] = {0};
  int64_t strides[1] = {1};
  TensorImpl int_impl(ScalarType::kLong, 1, sizes, ints, order, strides);
  Status dtype = method->set_input(0, EValue(Tensor(&int_impl)));
  EXPECT_THAT(dtype, ErrorIs(Error::kInvalidType, "must have dtype float32, got int64"));
  EXPECT_THAT(dtype.message(), HasSubstr("float32"));
  EXPECT_THAT(dtype.message(), HasSubstr("int64"));

  // Wrong shape (static input).
  FloatTensor four({1, 2, 3, 4}, {4});
  Status shape = method->set_input(0, four.value());
  EXPECT_THAT(shape, ErrorIs(Error::kInvalidArgument, "static tensor has sizes [3], got [4]"));
  EXPECT_THAT(shape.message(), HasSubstr("[3]"));
  EXPECT_THAT(shape.message(), HasSubstr("[4]"));

  // Wrong rank.
  FloatTensor matrix({1, 2, 3}, {1, 3});
  EXPECT_THAT(method->set_input(0, matrix.value()), ErrorIs(Error::kInvalidArgument, "must be 1-d with sizes [3], got 2-d [1, 3]"));

  // Not a tensor; index out of range.
  EXPECT_THAT(method->set_input(0, EValue(int64_t{3})), ErrorIs(Error::kInvalidType, "must be a Tensor, got Int"));
  EXPECT_THAT(method->set_input(5, four.value()), ErrorIs(Error::kInvalidArgument, "input index 5 is out of range"));
  EXPECT_THAT(method->output(9), ErrorIs(Error::kInvalidArgument, "output index 9 is out of range"));
}

TEST(MethodTest, UnknownOperatorsAreAllListedAtLoad) {
  auto object = unpack(read_fixture("linear_constant_buffer.pte"));
  auto& ops = object->execution_plan[0]->operators;
  ops[0]->name = "aten::frobnicate";
  ops[1]->name = "custom::nonexistent";
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kOperatorMissing, "'aten::frobnicate.out', 'custom::nonexistent.out'"));
  EXPECT_THAT(method.status().message(), HasSubstr("2 operators have no kernel"));
  EXPECT_THAT(method.status().message(), HasSubstr("aten::frobnicate.out"));
  EXPECT_THAT(method.status().message(), HasSubstr("custom::nonexistent.out"));
  EXPECT_THAT(method.status().message(), HasSubstr("'forward'"));
}

TEST(MethodTest, WrongDtypeForKernelKeyIsReported) {
  // The test kernels are keyless, so register a keyed one for a new op.
  auto object = unpack(read_fixture("add.pte"));
  object->execution_plan[0]->operators[0]->name = "test::keyed";
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  static constexpr ArgSpec kArgs[] = {{"self", ArgType::kTensor},
                                      {"other", ArgType::kTensor},
                                      {"alpha", ArgType::kScalar},
                                      {"out", ArgType::kTensor, true},
                                      {"result", ArgType::kReturn, true}};
  static constexpr OpSchema kSchema{"test::keyed.out", "keyed.out(...)", kArgs, 5, false};
  Kernel keyed{"test::keyed.out", [](KernelContext&, Span<EValue*>) {}};
  keyed.schema = &kSchema;
  keyed.key.num_tensors = 1;
  keyed.key.tensors[0].any_dtype = false;
  keyed.key.tensors[0].dtype = ScalarType::kLong;
  ASSERT_TRUE(l.kernels.register_kernel(keyed).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kOperatorMissing, "'test::keyed.out' (not for these dtypes)"));
  EXPECT_THAT(method.status().message(), HasSubstr("not for these dtypes"));
}

TEST(MethodTest, AllocationFailureStressGrowsUntilLoadSucceeds) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("linear_constant_buffer.pte")).ok());
  size_t budget = 0;
  for (;; budget += 8) {
    auto method = l.method("forward", budget);
    if (method.ok()) break;
    ASSERT_THAT(method, ErrorIs(Error::kMemoryAllocationFailed, "method allocator is out of memory")) << method.status().message();
    ASSERT_THAT(method.status().message(), HasSubstr("out of memory"));
    ASSERT_LT(budget, 1u << 16);
  }
  EXPECT_GT(budget, 0u);
}

TEST(MethodTest, MissingPlannedArenasIsAnError) {
  Loaded l;
  ASSERT_TRUE(l.load_program(read_fixture("add.pte")).ok());
  TestMemory memory({});  // No arenas although the method needs one.
  auto method = l.program->load_method("forward", &memory.manager, l.kernels);
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "planned memory id 1 is out of range"));
  EXPECT_THAT(method.status().message(), HasSubstr("arena"));
}

// values: 0 a, 1 b, 2 out, 3 alpha(1)
std::unique_ptr<fb::ProgramT> add_program(std::vector<fb::InstructionT> extra_after = {}) {
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 16));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 32));
  values.push_back(int_value(1));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("aten::add", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 1, 3, 2, 2}));
  for (auto& i : extra_after) instructions.push_back(std::move(i));
  return make_program("forward", std::move(values), {0, 1}, {2}, std::move(ops),
                      std::move(instructions), {48});
}

TEST(MethodTest, MoveJumpAndFreeInstructions) {
  // values: 0 x, 1 y, 2 out, 3 alpha, 4 cond(false), 5 moved-to, 6 scratch tensor
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 16));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 32));
  values.push_back(int_value(1));
  values.push_back(bool_value(false));
  values.push_back(int_value(0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {0}, 0, 0, 0,
                                fb::TensorShapeDynamism::DYNAMIC_UNBOUND));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("aten::add", "out"));
  ops.push_back(op("aten::mul", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 1, 3, 2, 2}));  // out = x + y
  instructions.push_back(jump_false_call(4, 3));            // cond false: skip the mul
  instructions.push_back(kernel_call(1, {2, 2, 2, 2}));     // out = out * out (skipped)
  instructions.push_back(move_call(3, 5));                  // values[5] = alpha
  instructions.push_back(free_call(6));
  auto object = make_program("forward", std::move(values), {0, 1}, {2, 5}, std::move(ops),
                             std::move(instructions), {48});
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({10, 20}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  const int calls_before = test_kernel_calls();
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(test_kernel_calls() - calls_before, 1);  // The mul was jumped over.
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({11, 22}));
  const EValue* moved = method->output(1).get();
  ASSERT_TRUE(moved->is_int());
  EXPECT_EQ(moved->to_int(), 1);
}

// As torch.cond is lowered: out = x + y, then out = out * out only when the
// Bool tensor input `cond` holds. values: 0 x, 1 y, 2 out, 3 alpha, 4 cond.
TEST(MethodTest, JumpFalseOnBoolTensor) {
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 16));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 32));
  values.push_back(int_value(1));
  values.push_back(tensor_value(fb::ScalarType::BOOL, {1}, 1, 48));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("aten::add", "out"));
  ops.push_back(op("aten::mul", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 1, 3, 2, 2}));
  instructions.push_back(jump_false_call(4, 3));
  instructions.push_back(kernel_call(1, {2, 2, 2, 2}));
  auto object = make_program("forward", std::move(values), {0, 1, 4}, {2}, std::move(ops),
                             std::move(instructions), {64});
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({2, 3}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  for (const uint8_t holds : {1, 0, 2}) {  // Any non-zero byte is true.
    uint8_t data[1] = {holds};
    SizesType sizes[1] = {1};
    DimOrderType dim_order[1] = {0};
    StridesType strides[1] = {1};
    TensorImpl cond(ScalarType::kBool, 1, sizes, data, dim_order, strides);
    ASSERT_TRUE(method->set_input(2, EValue(Tensor(&cond))).ok());
    ASSERT_TRUE(method->execute().ok());
    EXPECT_EQ(values_of(*method->output(0).get()),
              holds ? std::vector<float>({9, 25}) : std::vector<float>({3, 5}))
        << "cond byte " << static_cast<int>(holds);
  }
}

TEST(MethodTest, JumpConditionMustBeBoolOrBoolTensor) {
  std::vector<fb::InstructionT> extra;
  extra.push_back(jump_false_call(0, 1));  // Value 0 is a Float tensor.
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*add_program(std::move(extra)))).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "expected Bool or a Bool tensor"));
  EXPECT_THAT(method.status().message(), HasSubstr("jump condition value 0 is float32 tensor"));
}

// FreeCall of an unplanned input ends the borrow: the next execute needs
// set_input again. Planned storage cannot be freed.
TEST(MethodTest, FreeCallEndsTheBorrowOfAnUnplannedInput) {
  std::vector<fb::InstructionT> extra;
  extra.push_back(free_call(0));
  auto object = add_program(std::move(extra));
  object->execution_plan[0]->values[0]->val.AsTensor()->allocation_info.reset();
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({3, 4}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({4, 6}));
  Status again = method->execute();
  EXPECT_THAT(again, ErrorIs(Error::kInvalidState, "input 0 was not set"));
  EXPECT_THAT(again.message(), HasSubstr("input 0 was not set"));
  FloatTensor x2({10, 20}, {2});
  ASSERT_TRUE(method->set_input(0, x2.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({13, 24}));

  std::vector<fb::InstructionT> planned;
  planned.push_back(free_call(1));  // y is planned.
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack(*add_program(std::move(planned)))).ok());
  auto rejected = l2.method();
  ASSERT_FALSE(rejected.ok());
  EXPECT_THAT(rejected, ErrorIs(Error::kInvalidProgram, "free of value 1, which has planned storage"));
  EXPECT_THAT(rejected.status().message(), HasSubstr("free of value 1, which has planned storage"));
}

TEST(MethodTest, IntermediateTensorWithoutMemoryFailsLoad) {
  auto object = add_program();
  auto& values = object->execution_plan[0]->values;
  values.push_back(std::make_unique<fb::EValueT>(tensor_value(fb::ScalarType::FLOAT, {2})));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "intermediate tensor with no memory"));
  EXPECT_THAT(method.status().message(), HasSubstr("value 4 is an intermediate tensor with no memory"));

  values.back() = std::make_unique<fb::EValueT>(tensor_value(
      fb::ScalarType::FLOAT, {2}, 0, 0, 0, fb::TensorShapeDynamism::DYNAMIC_UNBOUND));
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack(*object)).ok());
  EXPECT_THAT(l2.method(), ErrorIs(Error::kNotSupported, "DYNAMIC_UNBOUND"));
}

TEST(MethodTest, UnplannedOutputMustBeBound) {
  auto object = add_program();
  object->execution_plan[0]->values[2]->val.AsTensor()->allocation_info.reset();
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({3, 4}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  Status unbound = method->execute();
  EXPECT_THAT(unbound, ErrorIs(Error::kInvalidState, "output 0 has no memory"));
  EXPECT_THAT(unbound.message(), HasSubstr("set_output_data_ptr"));
  float small[1];
  EXPECT_THAT(method->set_output_data_ptr(0, small, sizeof(small)), ErrorIs(Error::kInvalidArgument, "the buffer given has 4"));
  float out[2];
  ASSERT_TRUE(method->set_output_data_ptr(0, out, sizeof(out)).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], 6);
}

TEST(MethodTest, KernelResultMayNotBeAConstant) {
  // add_eh: values 0 constant, 1 x, 2 out, 3 alpha. Make the result the constant.
  auto object = unpack(read_fixture("add_eh.pte"));
  auto* call = object->execution_plan[0]->chains[0]->instructions[0]->instr_args.AsKernelCall();
  call->args = {1, 0, 3, 0, 0};
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object, {{0, 0, 128, 63}})).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "the kernel writes that argument"));
  EXPECT_THAT(method.status().message(), HasSubstr("constant tensor"));
}

// What a prepare step saw through PrepareContext::is_constant, per argument.
std::vector<bool> g_constant_seen;

Status record_constant_args(PrepareContext& ctx, Span<EValue*> args, PreparedCall*) {
  g_constant_seen.clear();
  for (size_t k = 0; k < args.size(); ++k) g_constant_seen.push_back(ctx.is_constant(k));
  return Error::kOk;
}

void noop_kernel(KernelContext&, Span<EValue*>) {}

constexpr ArgSpec kRecordingAddArgs[] = {{"self", ArgType::kTensor},
                                         {"other", ArgType::kTensor},
                                         {"alpha", ArgType::kScalar},
                                         {"out", ArgType::kTensor, true},
                                         {"result", ArgType::kReturn, true}};
constexpr OpSchema kRecordingAddSchema{
    "aten::add.out", "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    kRecordingAddArgs, 5, false};

// Loads `object` with add.out prepared by record_constant_args, which fills
// g_constant_seen with the flags PrepareContext gave each argument.
void load_recording_constant_args(fb::ProgramT& object) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(object, {{0, 0, 128, 63}})).ok());
  const Kernel recording{"aten::add.out", noop_kernel, KernelPriority::kCustom, KernelKey{},
                         &kRecordingAddSchema, record_constant_args};
  ASSERT_TRUE(l.kernels.register_kernel(recording).ok());
  g_constant_seen.clear();
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
}

TEST(MethodTest, PrepareSeesWhichArgumentsAreProgramConstants) {
  // add_eh: value 0 is a constant-segment tensor, 1 the input x, 2 the
  // (planned) output, 3 alpha. Only the argument holding value 0 is constant.
  auto object = unpack(read_fixture("add_eh.pte"));
  const auto* call = object->execution_plan[0]->chains[0]->instructions[0]->instr_args.AsKernelCall();
  const std::vector<int32_t> arg_values = call->args;
  ASSERT_NO_FATAL_FAILURE(load_recording_constant_args(*object));
  ASSERT_EQ(g_constant_seen.size(), arg_values.size());
  bool saw_constant = false;
  for (size_t k = 0; k < arg_values.size(); ++k) {
    EXPECT_EQ(g_constant_seen[k], arg_values[k] == 0) << "argument " << k << " (value " << arg_values[k] << ")";
    saw_constant |= g_constant_seen[k];
  }
  EXPECT_TRUE(saw_constant);
}

TEST(MethodTest, ConstantPassedToADelegateIsNotReportedConstant) {
  // Same program plus a delegate call that receives the constant: a delegate
  // may write its arguments, so the kernel must not precompute from it.
  auto object = unpack(read_fixture("add_eh.pte"));
  auto& instructions = object->execution_plan[0]->chains[0]->instructions;
  const std::vector<int32_t> arg_values = instructions[0]->instr_args.AsKernelCall()->args;
  auto delegate = std::make_unique<fb::BackendDelegateT>();
  delegate->id = "TestAddBackend";
  delegate->processed = std::make_unique<fb::BackendDelegateDataReferenceT>();
  delegate->processed->location = fb::DataLocation::INLINE;
  delegate->processed->index = 0;
  object->execution_plan[0]->delegates.push_back(std::move(delegate));
  auto blob = std::make_unique<fb::BackendDelegateInlineDataT>();
  const float bias = 0;
  blob->data.resize(4);
  std::memcpy(blob->data.data(), &bias, 4);
  object->backend_delegate_data.push_back(std::move(blob));
  // Appended after the kernel: the constant's flag must already be off when
  // the earlier kernel is prepared.
  auto instruction = std::make_unique<fb::InstructionT>(delegate_call(0, {0, 1, 2}));
  instructions.push_back(std::move(instruction));
  ASSERT_NO_FATAL_FAILURE(load_recording_constant_args(*object));
  ASSERT_EQ(g_constant_seen.size(), arg_values.size());
  for (size_t k = 0; k < arg_values.size(); ++k) EXPECT_FALSE(g_constant_seen[k]) << "argument " << k;
}

TEST(MethodTest, EndlessLoopHitsTheStepCap) {
  std::vector<fb::EValueT> values;
  values.push_back(bool_value(false));
  auto object = make_program("forward", std::move(values), {}, {}, {},
                             [] {
                               std::vector<fb::InstructionT> v;
                               v.push_back(jump_false_call(0, 0));  // Jumps to itself.
                               return v;
                             }(),
                             {});
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  method->set_max_steps(1000);
  Status status = method->execute();
  EXPECT_THAT(status, ErrorIs(Error::kOutOfResources, "ran more than 1000 instructions"));
  EXPECT_THAT(status.message(), HasSubstr("loops"));
}

TEST(MethodTest, InvalidIndicesInInstructionsFailLoad) {
  std::vector<std::pair<const char*, fb::InstructionT>> cases;
  cases.emplace_back("argument", kernel_call(0, {0, 1, 3, 2, 99}));
  cases.emplace_back("operator index", kernel_call(5, {0, 1, 3, 2, 2}));
  cases.emplace_back("move", move_call(0, 1000));
  cases.emplace_back("jump destination", jump_false_call(3, 50));
  cases.emplace_back("delegate index", delegate_call(0, {0, 1, 2}));
  cases.emplace_back("not a tensor", free_call(3));
  for (auto& [what, instruction] : cases) {
    std::vector<fb::InstructionT> extra;
    extra.push_back(std::move(instruction));
    Loaded l;
    ASSERT_TRUE(l.load_program(pack(*add_program(std::move(extra)))).ok());
    auto method = l.method();
    ASSERT_FALSE(method.ok()) << what;
    EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "instruction 1: ")) << what;
    EXPECT_THAT(method.status().message(), HasSubstr("instruction 1")) << what;
    EXPECT_THAT(method.status().message(), HasSubstr(what));
  }
}

TEST(MethodTest, PlannedTensorOutsideArenaFailsLoad) {
  auto object = add_program();
  object->execution_plan[0]->values[2]->val.AsTensor()->allocation_info->memory_offset_low = 44;
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "runs past arena 1"));
  EXPECT_THAT(method.status().message(), HasSubstr("value 2"));
  EXPECT_THAT(method.status().message(), HasSubstr("runs past arena"));

  auto bad_id = add_program();
  bad_id->execution_plan[0]->values[0]->val.AsTensor()->allocation_info->memory_id = 7;
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack(*bad_id)).ok());
  EXPECT_THAT(l2.method(), ErrorIs(Error::kInvalidProgram, "planned memory id 7 is out of range"));
}

TEST(MethodTest, HugeAndNegativeSizesFailLoad) {
  const std::vector<std::vector<int32_t>> bad = {
      {INT32_MAX, INT32_MAX, INT32_MAX},  // numel overflows int64
      {-1},
      {1 << 30, 1 << 30, 4},  // numel fits, bytes overflow
  };
  for (const auto& sizes : bad) {
    auto object = add_program();
    auto* t = object->execution_plan[0]->values[0]->val.AsTensor();
    t->sizes = sizes;
    t->dim_order.resize(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) t->dim_order[i] = static_cast<uint8_t>(i);
    Loaded l;
    ASSERT_TRUE(l.load_program(pack(*object)).ok());
    auto method = l.method();
    ASSERT_FALSE(method.ok());
    EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "value 0: tensor")) << method.status().message();
    EXPECT_THAT(method.status().message(), HasSubstr("value 0"));
  }
}

TEST(MethodTest, BadDimOrderAndScalarTypeFailLoad) {
  auto object = add_program();
  object->execution_plan[0]->values[1]->val.AsTensor()->dim_order = {0, 0};
  object->execution_plan[0]->values[1]->val.AsTensor()->sizes = {1, 2};
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  EXPECT_THAT(l.method().status().message(), HasSubstr("permutation"));

  auto object2 = add_program();
  object2->execution_plan[0]->values[1]->val.AsTensor()->scalar_type = static_cast<fb::ScalarType>(9);
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack(*object2)).ok());
  EXPECT_THAT(l2.method().status().message(), HasSubstr("invalid scalar type 9"));
}

TEST(MethodTest, IntListMustReferToIntValues) {
  auto object = add_program();
  fb::IntListT list;
  list.items = {3, 0};  // value 0 is a tensor
  fb::EValueT v;
  v.val.Set(std::move(list));
  object->execution_plan[0]->values.push_back(std::make_unique<fb::EValueT>(std::move(v)));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.status().message(), HasSubstr("not an Int value"));
}

TEST(MethodTest, ListsOfEveryKindAreParsed) {
  auto object = add_program();
  auto& values = object->execution_plan[0]->values;
  auto push = [&](auto&& table) {
    fb::EValueT v;
    v.val.Set(std::move(table));
    values.push_back(std::make_unique<fb::EValueT>(std::move(v)));
    return static_cast<int>(values.size() - 1);
  };
  fb::IntListT ints;
  ints.items = {3, 3};
  const int int_list = push(std::move(ints));
  fb::DoubleListT doubles;
  doubles.items = {0.5, -2};
  const int double_list = push(std::move(doubles));
  fb::BoolListT bools;
  bools.items = {true, false, true};
  const int bool_list = push(std::move(bools));
  fb::TensorListT tensors;
  tensors.items = {0, 1};
  const int tensor_list = push(std::move(tensors));
  fb::OptionalTensorListT optional;
  optional.items = {-1, 2};
  const int optional_list = push(std::move(optional));
  fb::StringT text;
  text.string_val = "hello";
  const int string_value = push(std::move(text));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  const auto i = method->value(int_list).to_int_list();
  ASSERT_EQ(i.size(), 2u);
  EXPECT_EQ(i[0], 1);
  EXPECT_EQ(method->value(double_list).to_double_list()[1], -2.0);
  EXPECT_EQ(method->value(bool_list).to_bool_list().size(), 3u);
  EXPECT_TRUE(method->value(bool_list).to_bool_list()[2]);
  EXPECT_EQ(method->value(tensor_list).to_tensor_list().size(), 2u);
  const auto opt = method->value(optional_list).to_tensor_list();
  EXPECT_FALSE(opt[0].defined());
  EXPECT_TRUE(opt[1].defined());
  EXPECT_TRUE(method->value(optional_list).is_optional_tensor_list());
  EXPECT_EQ(method->value(string_value).to_string(), "hello");
}

TEST(MethodTest, DynamicBoundInputResizesOutput) {
  auto object = add_program();
  for (int i = 0; i < 3; ++i) {
    auto* t = object->execution_plan[0]->values[i]->val.AsTensor();
    t->sizes = {4};
    t->shape_dynamism = fb::TensorShapeDynamism::DYNAMIC_BOUND;
  }
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({3, 4}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  const EValue* out = method->output(0).get();
  EXPECT_EQ(out->to_tensor().size(0), 2);
  EXPECT_EQ(values_of(*out), std::vector<float>({4, 6}));
  // Above the bound: rejected with both numbers.
  FloatTensor big({1, 2, 3, 4, 5}, {5});
  Status status = method->set_input(0, big.value());
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "more than the 4 its storage holds"));
  EXPECT_THAT(status.message(), HasSubstr("5 elements"));
  EXPECT_THAT(status.message(), HasSubstr("more than the 4"));
}

TEST(MethodTest, UnplannedInputsBorrowCallerMemory) {
  auto object = add_program();
  for (int i = 0; i < 2; ++i) {
    object->execution_plan[0]->values[i]->val.AsTensor()->allocation_info.reset();
  }
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 2}, {2});
  FloatTensor y({3, 4}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, y.value()).ok());
  EXPECT_EQ(method->input_value(0).to_tensor().const_data_ptr(), x.data.data());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({4, 6}));
}

TEST(MethodTest, MutableTensorStartsFromItsSegmentAndKeepsState) {
  // state (planned, initial value [5, 7]) = state + x, output state.
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0));      // 0 x
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 16, 1));  // 1 state
  values.push_back(int_value(1));                                        // 2 alpha
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("aten::add", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {1, 0, 2, 1, 1}));
  auto object = make_program("forward", std::move(values), {0}, {1}, std::move(ops),
                             std::move(instructions), {32});
  auto list = std::make_unique<fb::SubsegmentOffsetsT>();
  list->segment_index = 0;
  list->offsets = {0, 16};  // Entry 1 at byte 16 of segment 0.
  object->mutable_data_segments.push_back(std::move(list));
  std::vector<uint8_t> segment(24, 0);
  const float initial[2] = {5, 7};
  std::memcpy(segment.data() + 16, initial, sizeof(initial));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object, {segment})).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor x({1, 1}, {2});
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({6, 8}));
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({7, 9}));
}

// values: 0 a, 1 b, 2 out
std::unique_ptr<fb::ProgramT> delegate_program(fb::DataLocation location) {
  std::vector<fb::EValueT> values;
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 16));
  values.push_back(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 32));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(delegate_call(0, {0, 1, 2}));
  auto object = make_program("forward", std::move(values), {0, 1}, {2}, {},
                             std::move(instructions), {48});
  auto delegate = std::make_unique<fb::BackendDelegateT>();
  delegate->id = "TestAddBackend";
  delegate->processed = std::make_unique<fb::BackendDelegateDataReferenceT>();
  delegate->processed->location = location;
  delegate->processed->index = 0;
  auto spec = std::make_unique<fb::CompileSpecT>();
  spec->key = "scale";
  spec->value = {2};
  delegate->compile_specs.push_back(std::move(spec));
  object->execution_plan[0]->delegates.push_back(std::move(delegate));
  return object;
}

std::vector<uint8_t> bias_blob(float bias) {
  std::vector<uint8_t> blob(4);
  std::memcpy(blob.data(), &bias, 4);
  return blob;
}

TEST(MethodTest, DelegateFromInlineDataAndFromSegment) {
  for (auto location : {fb::DataLocation::INLINE, fb::DataLocation::SEGMENT}) {
    auto object = delegate_program(location);
    std::vector<std::vector<uint8_t>> segments;
    if (location == fb::DataLocation::INLINE) {
      auto inline_data = std::make_unique<fb::BackendDelegateInlineDataT>();
      inline_data->data = bias_blob(0.5f);
      object->backend_delegate_data.push_back(std::move(inline_data));
    } else {
      segments.push_back(bias_blob(0.5f));
    }
    Loaded l;
    ASSERT_TRUE(l.load_program(pack(*object, segments)).ok());
    {
      auto method = l.method();
      ASSERT_TRUE(method.ok()) << method.status().message();
      EXPECT_TRUE(method->method_meta().uses_backend("TestAddBackend"));
      FloatTensor a({1, 2}, {2});
      FloatTensor b({3, 4}, {2});
      ASSERT_TRUE(method->set_input(0, a.value()).ok());
      ASSERT_TRUE(method->set_input(1, b.value()).ok());
      ASSERT_TRUE(method->execute().ok());
      // (a + b) * scale(2) + bias(0.5)
      EXPECT_EQ(values_of(*method->output(0).get()), std::vector<float>({8.5f, 12.5f}));
      EXPECT_EQ(l.backend.inits, 1);
      EXPECT_EQ(l.backend.executes, 1);
    }
    EXPECT_EQ(l.backend.destroys, 1);  // Destroyed with the Method.
  }
}

TEST(MethodTest, MissingOrUnavailableBackend) {
  auto object = delegate_program(fb::DataLocation::INLINE);
  object->execution_plan[0]->delegates[0]->id = "XnnpackBackend";
  auto inline_data = std::make_unique<fb::BackendDelegateInlineDataT>();
  inline_data->data = bias_blob(0);
  object->backend_delegate_data.push_back(std::move(inline_data));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kBackendMissing, "'XnnpackBackend' is not registered"));
  EXPECT_THAT(method.status().message(), HasSubstr("XnnpackBackend"));

  auto object2 = delegate_program(fb::DataLocation::INLINE);
  auto inline2 = std::make_unique<fb::BackendDelegateInlineDataT>();
  inline2->data = bias_blob(0);
  object2->backend_delegate_data.push_back(std::move(inline2));
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack(*object2)).ok());
  l2.backend.available = false;
  EXPECT_THAT(l2.method(), ErrorIs(Error::kNotSupported, "is not available on this machine"));
}

TEST(MethodTest, DelegateInitFailureIsReported) {
  auto object = delegate_program(fb::DataLocation::INLINE);
  auto inline_data = std::make_unique<fb::BackendDelegateInlineDataT>();
  inline_data->data = {1, 2};  // Not the 4 bytes the backend wants.
  object->backend_delegate_data.push_back(std::move(inline_data));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kDelegateInvalidCompatibility, "failed to initialise: blob must be 4 bytes"));
  EXPECT_THAT(method.status().message(), HasSubstr("TestAddBackend"));
  EXPECT_THAT(method.status().message(), HasSubstr("4 bytes"));
}

TEST(MethodTest, KernelFailureNamesOperatorAndInstruction) {
  auto object = add_program();
  object->execution_plan[0]->values[1]->val.AsTensor()->scalar_type = fb::ScalarType::INT;
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*object)).ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok());
  FloatTensor x({1, 2}, {2});
  int32_t ints[2] = {1, 2};
  int32_t sizes[1] = {2};
  uint8_t order[1] = {0};
  int64_t strides[1] = {1};
  TensorImpl int_impl(ScalarType::kInt, 1, sizes, ints, order, strides);
  ASSERT_TRUE(method->set_input(0, x.value()).ok());
  ASSERT_TRUE(method->set_input(1, EValue(Tensor(&int_impl))).ok());
  Status status = method->execute();
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "test kernel takes float32 only"));
  EXPECT_THAT(status.message(), HasSubstr("instruction 0 (aten::add.out)"));
  EXPECT_THAT(status.message(), HasSubstr("float32 only"));
}

}  // namespace
}  // namespace torchlight
