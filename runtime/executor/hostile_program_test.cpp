// Hostile programs (issue 9, section 2): each test crafts a .pte that used to
// crash or corrupt memory, and checks the runtime now answers with an error
// naming the problem. Run under ASan/UBSan too: a regression shows up there
// as a report even where the old behaviour happened not to crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "extension/data_loader/buffer_data_loader.h"
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

// A float tensor over its own vector, for inputs.
struct FloatTensor {
  explicit FloatTensor(std::vector<float> values)
      : data(std::move(values)), size(static_cast<int32_t>(data.size())) {
    impl = std::make_unique<TensorImpl>(ScalarType::kFloat, 1, &size, data.data(), &order, &stride);
  }
  EValue value() const { return EValue(Tensor(impl.get())); }
  std::vector<float> data;
  int32_t size;
  uint8_t order = 0;
  int64_t stride = 1;
  std::unique_ptr<TensorImpl> impl;
};

// --- Unions with a type but no value -----------------------------------------

TEST(HostileProgramTest, ValueUnionWithoutItsTableFailsProgramLoad) {
  const fb::KernelTypes types[] = {
      fb::KernelTypes::Int,        fb::KernelTypes::Bool,       fb::KernelTypes::Double,
      fb::KernelTypes::Tensor,     fb::KernelTypes::String,     fb::KernelTypes::IntList,
      fb::KernelTypes::DoubleList, fb::KernelTypes::BoolList,   fb::KernelTypes::TensorList,
      fb::KernelTypes::OptionalTensorList};
  for (const fb::KernelTypes type : types) {
    const std::string name = fb::EnumNameKernelTypes(type);
    Loaded l;
    Status status = l.load_program(
        program_with_hollow_union(type, fb::InstructionArguments::NONE), "hostile.pte");
    EXPECT_THAT(status, ErrorIs(Error::kInvalidProgram, "but no value data")) << name;
    EXPECT_THAT(status.message(), HasSubstr("method 'forward': value 1 has type " + name +
                                            " but no value data"));
    EXPECT_THAT(status.message(), HasSubstr("hostile.pte"));
  }
}

TEST(HostileProgramTest, InstructionUnionWithoutItsTableFailsProgramLoad) {
  const fb::InstructionArguments kinds[] = {
      fb::InstructionArguments::KernelCall, fb::InstructionArguments::DelegateCall,
      fb::InstructionArguments::MoveCall, fb::InstructionArguments::JumpFalseCall,
      fb::InstructionArguments::FreeCall};
  for (const fb::InstructionArguments kind : kinds) {
    const std::string name = fb::EnumNameInstructionArguments(kind);
    Loaded l;
    Status status = l.load_program(program_with_hollow_union(fb::KernelTypes::NONE, kind));
    EXPECT_THAT(status, ErrorIs(Error::kInvalidProgram, "with no arguments table")) << name;
    EXPECT_THAT(status.message(),
                HasSubstr("chain 0 instruction 0 is a " + name + " with no arguments table"));
  }
}

// The same builder with every union whole makes a program that runs, so the
// two tests above fail only for the missing table.
TEST(HostileProgramTest, HollowUnionBuilderControlRuns) {
  Loaded l;
  ASSERT_TRUE(l.load_program(program_with_hollow_union(fb::KernelTypes::NONE,
                                                       fb::InstructionArguments::NONE))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(method->output(0).get()->to_int(), 7);
  EXPECT_TRUE(method->value(1).is_none());
}

// A Null value needs no table: nothing is read from it.
TEST(HostileProgramTest, NullValueWithoutItsTableLoads) {
  Loaded l;
  ASSERT_TRUE(l.load_program(program_with_hollow_union(fb::KernelTypes::Null,
                                                       fb::InstructionArguments::NONE))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  EXPECT_TRUE(method->value(1).is_none());
}

// --- Tensors that outgrow their storage ----------------------------------

// out = x + x with x and out each given `x_spec` / `out_spec`.
std::unique_ptr<fb::ProgramT> double_program(fb::EValueT x_spec, fb::EValueT out_spec,
                                             int64_t arena_bytes) {
  std::vector<fb::EValueT> values;
  values.push_back(std::move(x_spec));
  values.push_back(std::move(out_spec));
  values.push_back(int_value(1));
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  ops.push_back(op("aten::add", "out"));
  std::vector<fb::InstructionT> instructions;
  instructions.push_back(kernel_call(0, {0, 0, 2, 1, 1}));
  return make_program("forward", std::move(values), {0}, {1}, std::move(ops),
                      std::move(instructions), {arena_bytes});
}

constexpr auto kUnbound = fb::TensorShapeDynamism::DYNAMIC_UNBOUND;
constexpr auto kBound = fb::TensorShapeDynamism::DYNAMIC_BOUND;

// x is DYNAMIC_UNBOUND but planned for 2 floats at the arena's end: a larger
// input used to grow it and be copied past the arena.
TEST(HostileProgramTest, PlannedUnboundInputCannotGrowPastItsPlan) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 1, 8, 0, kUnbound),
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0, 0, kUnbound), 16)))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor big({1, 2, 3, 4});
  Status status = method->set_input(0, big.value());
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "more than the 2 its storage holds"));
  EXPECT_THAT(status.message(), HasSubstr("input 0"));
  EXPECT_THAT(status.message(), HasSubstr("need 4 elements, more than the 2"));
  // Within the plan it still resizes, and the output follows.
  FloatTensor small({1.5f});
  ASSERT_TRUE(method->set_input(0, small.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  const Tensor out = method->output(0).get()->to_tensor();
  ASSERT_EQ(out.numel(), 1);
  EXPECT_EQ(out.const_data_ptr<float>()[0], 3.0f);
}

// out is DYNAMIC_UNBOUND, planned for 2 floats; the caller's 4-float input
// made the kernel resize it to 4 and write 16 bytes into its 8.
TEST(HostileProgramTest, PlannedUnboundOutputCannotGrowPastItsPlan) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 0, 0, 0, kUnbound),
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0, 0, kUnbound), 8)))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor big({1, 2, 3, 4});
  ASSERT_TRUE(method->set_input(0, big.value()).ok());  // Borrowed: any size.
  Status status = method->execute();
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "more than the 2 its storage holds"));
  EXPECT_THAT(status.message(), HasSubstr("aten::add.out"));
  EXPECT_THAT(status.message(), HasSubstr("need 4 elements, more than the 2"));
}

// out is DYNAMIC_BOUND [4] and bound by the caller. Binding a 1-float buffer
// while out is [1] used to keep the capacity at 4, so a later [4] input
// made the kernel write 16 bytes into the caller's 4.
TEST(HostileProgramTest, CallerBufferIsTheCapacityOfABoundOutput) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(
                                 tensor_value(fb::ScalarType::FLOAT, {4}, 1, 0, 0, kBound),
                                 tensor_value(fb::ScalarType::FLOAT, {4}, 0, 0, 0, kBound), 16)))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  std::vector<float> roomy(4);
  ASSERT_TRUE(method->set_output_data_ptr(0, roomy.data(), roomy.size() * sizeof(float)).ok());
  FloatTensor one({1.5f});
  ASSERT_TRUE(method->set_input(0, one.value()).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(roomy[0], 3.0f);

  auto tight = std::make_unique<float[]>(1);  // Its own heap block, for ASan.
  ASSERT_TRUE(method->set_output_data_ptr(0, tight.get(), sizeof(float)).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(tight[0], 3.0f);
  FloatTensor four({1, 2, 3, 4});
  ASSERT_TRUE(method->set_input(0, four.value()).ok());
  Status status = method->execute();
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "more than the 1 its storage holds"));
  EXPECT_THAT(status.message(), HasSubstr("need 4 elements, more than the 1 its storage holds"));
  // A buffer for all four works again.
  ASSERT_TRUE(method->set_output_data_ptr(0, roomy.data(), roomy.size() * sizeof(float)).ok());
  ASSERT_TRUE(method->execute().ok());
  EXPECT_EQ(roomy, std::vector<float>({2, 4, 6, 8}));
}

// A caller's buffer smaller than the output's current sizes is refused.
TEST(HostileProgramTest, OutputBufferSmallerThanTheCurrentSizesIsRefused) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(
                                 tensor_value(fb::ScalarType::FLOAT, {4}, 1, 0, 0, kBound),
                                 tensor_value(fb::ScalarType::FLOAT, {4}, 0, 0, 0, kBound), 16)))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  float three[3];
  Status status = method->set_output_data_ptr(0, three, sizeof(three));
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "the buffer given has 12"));
  EXPECT_THAT(status.message(), HasSubstr("needs 16 bytes, the buffer given has 12"));
}

// An unplanned DYNAMIC_BOUND input may not exceed the program's bound, and
// a refused input leaves the method unable to run until set again.
TEST(HostileProgramTest, UnplannedBoundInputKeepsTheProgramsBound) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 0, 0, 0, kBound),
                                 tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0, 0, kBound), 8)))
                  .ok());
  auto method = l.method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  FloatTensor two({1, 2});
  ASSERT_TRUE(method->set_input(0, two.value()).ok());
  FloatTensor three({1, 2, 3});
  Status status = method->set_input(0, three.value());
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "more than the 2 the program allows"));
  EXPECT_THAT(status.message(), HasSubstr("3 elements), more than the 2 the program allows"));
  EXPECT_THAT(method->execute(), ErrorIs(Error::kInvalidState, "input 0 was not set"));
}

// --- Kernels writing constants ----------------------------------------------

// add_eh.pte: value 0 a constant [2], 1 the input x, 2 the planned output,
// 3 alpha; its one instruction is add.out(x, constant, alpha, out, out).
std::unique_ptr<fb::ProgramT> add_eh() { return unpack(read_fixture("add_eh.pte")); }
std::vector<uint8_t> pack_add_eh(fb::ProgramT& object) { return pack(object, {{0, 0, 128, 63}}); }
fb::KernelCallT* first_call(fb::ProgramT& object) {
  return object.execution_plan[0]->chains[0]->instructions[0]->instr_args.AsKernelCall();
}

TEST(HostileProgramTest, OutArgumentMayNotBeAConstantEvenIfTheReturnSlotIsNot) {
  auto object = add_eh();
  first_call(*object)->args = {1, 1, 3, 0, 2};  // out = the constant; return slot = value 2.
  Loaded l;
  ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "the kernel writes that argument"));
  EXPECT_THAT(method.status().message(),
              HasSubstr("argument 3 of 'aten::add.out' is constant tensor value 0, but the "
                        "kernel writes that argument"));
  EXPECT_THAT(method.status().message(), HasSubstr("instruction 0"));
}

// The call is checked against the kernel's schema at load.
TEST(HostileProgramTest, KernelCallTooShortForItsSchema) {
  auto object = add_eh();
  first_call(*object)->args = {2};
  Loaded l;
  ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.status().message(),
              HasSubstr("'aten::add.out' (schema add.out(Tensor self, Tensor other, *, Scalar "
                        "alpha=1, Tensor(a!) out) -> Tensor(a!)): expected 5 arguments (self, "
                        "other, alpha, out, result), got 1"));
}

TEST(HostileProgramTest, MoveIntoAConstantIsRefused) {
  auto object = add_eh();
  auto& instructions = object->execution_plan[0]->chains[0]->instructions;
  instructions.push_back(std::make_unique<fb::InstructionT>(move_call(2, 0)));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "move destination value 0 is a constant tensor"));
  EXPECT_THAT(method.status().message(), HasSubstr("move destination value 0 is a constant tensor"));
}

// Kernels are prepared for the kinds and dtypes values have at load, so a
// MoveCall may not change them.
TEST(HostileProgramTest, MoveThatChangesAValuesKindOrDtypeIsRefused) {
  for (const bool move_int : {true, false}) {
    auto program = add_eh();
    auto& values = program->execution_plan[0]->values;
    values.push_back(std::make_unique<fb::EValueT>(
        move_int ? int_value(5) : tensor_value(fb::ScalarType::LONG, {1}, 1, 0)));
    const int32_t from = static_cast<int32_t>(values.size() - 1);
    auto& instructions = program->execution_plan[0]->chains[0]->instructions;
    instructions.insert(instructions.begin(), std::make_unique<fb::InstructionT>(move_call(from, 2)));
    Loaded l;
    ASSERT_TRUE(l.load_program(pack_add_eh(*program)).ok());
    auto method = l.method();
    ASSERT_FALSE(method.ok());
    EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "would change the value's"));
    EXPECT_THAT(method.status().message(),
                HasSubstr(move_int ? "(Int) into value 2 (Tensor) would change the value's kind"
                                   : "(int64 tensor) into value 2 (float32 tensor) would change the "
                                     "value's dtype"));
  }
}

TEST(HostileProgramTest, MovingAConstantWhereAKernelWritesIsRefused) {
  // move constant -> out before add.out writes out: the kernel would write
  // the constant's memory.
  auto object = add_eh();
  auto& instructions = object->execution_plan[0]->chains[0]->instructions;
  instructions.insert(instructions.begin(), std::make_unique<fb::InstructionT>(move_call(0, 2)));
  Loaded l;
  ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.status().message(),
              HasSubstr("instruction 0 moves constant tensor value 0 into value 2, which a kernel "
                        "writes"));

  // Through an intermediate value: constant -> x, then x -> out.
  auto chained = add_eh();
  auto& list = chained->execution_plan[0]->chains[0]->instructions;
  list.insert(list.begin(), std::make_unique<fb::InstructionT>(move_call(1, 2)));
  list.insert(list.begin(), std::make_unique<fb::InstructionT>(move_call(0, 1)));
  Loaded l2;
  ASSERT_TRUE(l2.load_program(pack_add_eh(*chained)).ok());
  auto method2 = l2.method();
  ASSERT_FALSE(method2.ok());
  EXPECT_THAT(method2.status().message(),
              HasSubstr("moves constant tensor value 0 into value 1, which is moved on"));
}

// A kernel that updates its first argument in place (Tensor(a!) self) and
// has no out argument: the registry entry says so.
void scale_in_place(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_CHECK(ctx, args.size() == 2 && args[0]->is_tensor(), Error::kInvalidArgument,
                  "expected (self, factor)");
  const Tensor self = args[0]->to_tensor();
  for (int64_t i = 0; i < self.numel(); ++i) {
    self.mutable_data_ptr<float>()[i] *= static_cast<float>(args[1]->to_int());
  }
}

// scale_(Tensor(a!) self, int factor) -> ()
constexpr ArgSpec kScaleArgs[] = {{"self", ArgType::kTensor, true}, {"factor", ArgType::kInt}};
constexpr OpSchema kScaleSchema{"test::scale_", "scale_(Tensor(a!) self, int factor) -> ()",
                                kScaleArgs, 2, true};

const OpSchema* in_place_first() {
  return &kScaleSchema;
}

TEST(HostileProgramTest, InPlaceArgumentFromTheRegistryMayNotBeAConstant) {
  for (const bool on_constant : {true, false}) {
    auto object = add_eh();
    object->execution_plan[0]->operators.push_back(op("test::scale_", ""));
    object->execution_plan[0]->chains[0]->instructions.push_back(
        std::make_unique<fb::InstructionT>(kernel_call(1, {on_constant ? 0 : 2, 3})));
    Loaded l;
    ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
    ASSERT_TRUE(l.kernels
                    .register_kernel({"test::scale_", scale_in_place, KernelPriority::kPortable,
                                      KernelKey{}, in_place_first()})
                    .ok());
    auto method = l.method();
    if (!on_constant) {
      EXPECT_TRUE(method.ok()) << method.status().message();
      continue;
    }
    ASSERT_FALSE(method.ok());
    EXPECT_THAT(method.status().message(),
                HasSubstr("argument 0 of 'test::scale_' is constant tensor value 0"));
    EXPECT_THAT(method.status().message(), HasSubstr("instruction 1"));
  }
}

// --- Found by the fuzzers (fuzz/regressions) ----------------------------------

// A float planned at an odd offset: kernels stored floats at a misaligned
// address (undefined behaviour; UBSan reported it in aten::mean.out).
TEST(HostileProgramTest, MisalignedPlannedTensorIsRefused) {
  Loaded l;
  ASSERT_TRUE(l.load_program(pack(*double_program(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 1),
                                                  tensor_value(fb::ScalarType::FLOAT, {2}, 1, 12),
                                                  24)))
                  .ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "not aligned"));
  EXPECT_THAT(method.status().message(), HasSubstr("not aligned to its 4-byte elements"));
}

// An operator whose name was empty counted as already listed among the
// missing operators, so its instruction kept no kernel and execute called
// address 0. Empty names and names cut short by a NUL are refused.
TEST(HostileProgramTest, OperatorWithoutAUsableNameIsRefused) {
  for (const std::string& name : {std::string(), std::string("aten::add\0x", 11)}) {
    auto program = double_program(tensor_value(fb::ScalarType::FLOAT, {2}, 1, 0),
                                  tensor_value(fb::ScalarType::FLOAT, {2}, 1, 8), 16);
    program->execution_plan[0]->operators[0]->name = name;
    Loaded l;
    ASSERT_TRUE(l.load_program(pack(*program)).ok());
    auto method = l.method();
    ASSERT_FALSE(method.ok()) << "operator name of " << name.size() << " bytes";
    EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "operator 0 has"));
    EXPECT_THAT(method.status().message(), HasSubstr("operator 0 has"));
  }
}

// A kernel replaces the value at a position it writes. The program fuzzer
// gave view_copy.out its size list as the return slot and sum.IntList_out
// its keepdim Bool: both became Tensors, then the kernel read them as a list
// and a bool (a wild pointer, an invalid bool). Written positions must hold
// what the kernel writes there.
TEST(HostileProgramTest, ReturnSlotOfAnOutVariantMustHoldATensor) {
  auto object = add_eh();
  fb::IntListT sizes;
  sizes.items = {3};
  fb::EValueT list;
  list.val.Set(sizes);
  object->execution_plan[0]->values.push_back(std::make_unique<fb::EValueT>(list));  // Value 4: [alpha].
  for (const int32_t slot : {3, 4}) {
    first_call(*object)->args = {1, 1, 3, 2, slot};
    Loaded l;
    ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
    auto method = l.method();
    ASSERT_FALSE(method.ok()) << "return slot " << slot;
    EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "but the kernel writes a tensor there"));
    EXPECT_THAT(method.status().message(),
                HasSubstr("argument 4 of 'aten::add.out' is " +
                          std::string(slot == 3 ? "Int" : "IntList") + " value " +
                          std::to_string(slot) + ", but the kernel writes a tensor there"));
    EXPECT_THAT(method.status().message(), HasSubstr("instruction 0"));
  }
}

// An out variant returns its out tensor into the return slot. The program
// fuzzer (fuzz/regressions/program/return_slot_of_another_dtype.pte) gave
// sum.IntList_out a float tensor there and its out a bool one: the slot
// became the bool tensor, and gt.Scalar_out, prepared for a float self, read
// floats from a misaligned bool planned at offset 7.
TEST(HostileProgramTest, ReturnSlotOfAnotherDtypeThanTheOutIsRefused) {
  auto object = add_eh();
  auto& values = object->execution_plan[0]->values;
  values.push_back(std::make_unique<fb::EValueT>(tensor_value(fb::ScalarType::LONG, {3}, 1, 0)));
  const int32_t slot = static_cast<int32_t>(values.size() - 1);
  first_call(*object)->args = {1, 1, 3, 2, slot};
  Loaded l;
  ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
  auto method = l.method();
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "but the kernel returns its out there"));
  EXPECT_THAT(method.status().message(),
              HasSubstr("the return slot of 'aten::add.out' (argument 4) is int64 tensor value " +
                        std::to_string(slot) +
                        ", but the kernel returns its out there, float32 tensor value 2"));
  // The same slot holding the out itself, as exporters write it, loads.
  first_call(*object)->args = {1, 1, 3, 2, 2};
  Loaded ok;
  ASSERT_TRUE(ok.load_program(pack_add_eh(*object)).ok());
  EXPECT_TRUE(ok.method().ok());
}

// test::numel_times(Tensor self, int k) -> int: writes only its result slot.
void numel_times(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_CHECK(ctx, args.size() == 3 && args[0]->is_tensor() && args[1]->is_int(),
                  Error::kInvalidArgument, "expected (self, k, result)");
  *args[2] = EValue(args[0]->to_tensor().numel() * args[1]->to_int());
}

constexpr ArgSpec kNumelTimesArgs[] = {
    {"self", ArgType::kTensor}, {"k", ArgType::kInt}, {"result", ArgType::kReturn, true}};
constexpr OpSchema kNumelTimesSchema{"test::numel_times",
                                     "numel_times(Tensor self, int k) -> int", kNumelTimesArgs, 3,
                                     false};

TEST(HostileProgramTest, ScalarResultSlotMayNotBeReadByTheSameCall) {
  for (const bool result_is_input : {true, false}) {
    auto object = add_eh();
    object->execution_plan[0]->values.push_back(std::make_unique<fb::EValueT>(int_value(0)));  // Value 4: the result.
    object->execution_plan[0]->operators.push_back(op("test::numel_times", ""));
    object->execution_plan[0]->chains[0]->instructions.push_back(
        std::make_unique<fb::InstructionT>(kernel_call(1, {1, 3, result_is_input ? 3 : 4})));
    Loaded l;
    ASSERT_TRUE(l.load_program(pack_add_eh(*object)).ok());
    ASSERT_TRUE(l.kernels
                    .register_kernel({"test::numel_times", numel_times, KernelPriority::kPortable,
                                      KernelKey{}, &kNumelTimesSchema})
                    .ok());
    auto method = l.method();
    if (result_is_input) {
      ASSERT_FALSE(method.ok());
      EXPECT_THAT(method, ErrorIs(Error::kInvalidProgram, "which the kernel overwrites as argument 2"));
      EXPECT_THAT(method.status().message(),
                  HasSubstr("instruction 1: argument 1 of 'test::numel_times' reads Int value 3, "
                            "which the kernel overwrites as argument 2"));
      continue;
    }
    // A fresh result slot: loads, and the kernel's Int lands in it.
    ASSERT_TRUE(method.ok()) << method.status().message();
    FloatTensor x({1, 2, 3});
    ASSERT_TRUE(method->set_input(0, x.value()).ok());
    ASSERT_TRUE(method->execute().ok());
    ASSERT_TRUE(method->value(4).is_int());
    EXPECT_EQ(method->value(4).to_int(), 3 * method->value(3).to_int());
  }
}

}  // namespace
}  // namespace torchlight
