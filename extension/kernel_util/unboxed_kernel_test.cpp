#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "extension/kernel_util/linked_kernels.h"
#include "extension/tensor/tensor_ptr.h"
#include "kernels/all_kernels.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using testing::ErrorIs;

// out = a + alpha * b (float32, same sizes): the getting-started shape.
Tensor& scaled_add_out(KernelContext& ctx, const Tensor& a, const Tensor& b, double alpha, Tensor& out) {
  if (a.scalar_type() != ScalarType::kFloat || b.scalar_type() != ScalarType::kFloat ||
      out.scalar_type() != ScalarType::kFloat || a.numel() != b.numel()) {
    ctx.fail(Status::error(Error::kInvalidArgument, "scaled_add: float32 tensors of equal numel only"));
    return out;
  }
  Status resized = out.resize(a.sizes());
  if (!resized.ok()) {
    ctx.fail(resized);
    return out;
  }
  const float* x = a.const_data_ptr<float>();
  const float* y = b.const_data_ptr<float>();
  float* z = out.mutable_data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + static_cast<float>(alpha) * y[i];
  return out;
}

// Every supported kind, no context: out[0] = a sum of everything it got.
Tensor& mixed_out(const Tensor& a, std::optional<Tensor> bias, Scalar s, int64_t k, bool flag,
                  Span<const int64_t> dims, std::optional<double> maybe, Span<const Tensor> list,
                  std::string_view tag, Tensor& out) {
  double total = a.const_data_ptr<float>()[0] + s.to<double>() + static_cast<double>(k) + (flag ? 100 : 0);
  if (bias) total += bias->const_data_ptr<float>()[0];
  for (int64_t d : dims) total += 1000.0 * static_cast<double>(d);
  total += maybe.value_or(-0.5);
  for (const Tensor& t : list) total += t.const_data_ptr<float>()[0];
  total += static_cast<double>(tag.size()) * 1e4;
  out.mutable_data_ptr<float>()[0] = static_cast<float>(total);
  return out;
}

// Returns nothing: the schema's `-> ()`.
void fill_out(KernelContext&, double value, Tensor& out) {
  float* z = out.mutable_data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) z[i] = static_cast<float>(value);
}

// constexpr: constant-initialised, no code before main.
constexpr UnboxedKernel kScaledAdd{"test_ops::scaled_add.out", unboxed<&scaled_add_out>};
constexpr UnboxedKernel kMixed{"test_ops::mixed.out", unboxed<&mixed_out>};
constexpr UnboxedKernel kFill{"test_ops::fill.out", unboxed<&fill_out>};
// A library-style table of them, also constant.
constexpr Kernel kTestTable[] = {kScaledAdd.kernel(), kFill.kernel()};

TL_REGISTER_KERNEL(test_ops, "linked_scaled_add.out", scaled_add_out);

struct Allocators {
  std::vector<uint8_t> storage = std::vector<uint8_t>(4096);
  MemoryAllocator allocator{storage.data(), storage.size()};
};

TEST(UnboxedKernelTest, SchemaIsDerivedFromTheSignature) {
  const OpSchema& schema = kScaledAdd.schema();
  EXPECT_STREQ(schema.name, "test_ops::scaled_add.out");
  ASSERT_EQ(schema.num_args, 5u);  // a, b, alpha, out, return slot; the context is not an argument.
  EXPECT_FALSE(schema.returns_nothing);
  const ArgType expected[] = {ArgType::kTensor, ArgType::kTensor, ArgType::kDouble, ArgType::kTensor,
                              ArgType::kReturn};
  const bool written[] = {false, false, false, true, true};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(schema.args[i].type, expected[i]) << i;
    EXPECT_EQ(schema.args[i].written, written[i]) << i;
  }
  EXPECT_STREQ(schema.args[3].name, "out");
  EXPECT_STREQ(schema.text, "(Tensor arg0, Tensor arg1, float arg2, Tensor(a!) out) -> Tensor");
  EXPECT_EQ(kScaledAdd.kernel().schema, &schema);
  EXPECT_EQ(kScaledAdd.kernel().priority, KernelPriority::kCustom);

  const OpSchema& mixed = kMixed.schema();
  const ArgType mixed_types[] = {ArgType::kTensor,     ArgType::kOptionalTensor, ArgType::kScalar,
                                 ArgType::kInt,        ArgType::kBool,           ArgType::kIntList,
                                 ArgType::kOptionalDouble, ArgType::kTensorList, ArgType::kString,
                                 ArgType::kTensor,     ArgType::kReturn};
  ASSERT_EQ(mixed.num_args, 11u);
  for (size_t i = 0; i < 11; ++i) EXPECT_EQ(mixed.args[i].type, mixed_types[i]) << i;

  EXPECT_STREQ(mixed.text,
               "(Tensor arg0, Tensor? arg1, Scalar arg2, int arg3, bool arg4, int[] arg5, float? arg6, "
               "Tensor[] arg7, str arg8, Tensor(a!) out) -> Tensor");
  EXPECT_TRUE(kFill.schema().returns_nothing);
  EXPECT_STREQ(kFill.schema().text, "(float arg0, Tensor(a!) out) -> ()");
  ASSERT_EQ(kFill.schema().num_args, 2u);
  EXPECT_TRUE(kFill.schema().args[1].written);
}

TEST(UnboxedKernelTest, RunsTheFunctionOnTheBoxedArguments) {
  auto a = make_tensor_ptr({2, 2}, std::vector<float>{1, 2, 3, 4});
  auto b = make_tensor_ptr({2, 2}, std::vector<float>{10, 20, 30, 40});
  auto out = make_tensor_ptr({2, 2}, std::vector<float>(4, 0.0f));
  EValue values[] = {EValue(*a), EValue(*b), EValue(0.5), EValue(*out), EValue()};
  EValue* args[] = {&values[0], &values[1], &values[2], &values[3], &values[4]};
  Allocators memory;
  ASSERT_TRUE(call_kernel(kScaledAdd.kernel(), Span<EValue*>(args), &memory.allocator).ok());
  const float expected[] = {6, 12, 18, 24};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out->const_data_ptr<float>()[i], expected[i]);
  // The return slot holds the out tensor.
  ASSERT_TRUE(values[4].is_tensor());
  EXPECT_EQ(values[4].to_tensor().impl(), out->impl());
}

TEST(UnboxedKernelTest, KernelFailureIsReported) {
  auto a = make_tensor_ptr({2}, std::vector<int64_t>{1, 2});
  auto out = make_tensor_ptr({2}, std::vector<float>{0, 0});
  EValue values[] = {EValue(*a), EValue(*a), EValue(1.0), EValue(*out), EValue()};
  EValue* args[] = {&values[0], &values[1], &values[2], &values[3], &values[4]};
  Allocators memory;
  EXPECT_THAT(call_kernel(kScaledAdd.kernel(), Span<EValue*>(args), &memory.allocator),
              ErrorIs(Error::kInvalidArgument, "float32 tensors"));
}

TEST(UnboxedKernelTest, EveryArgumentKindArrives) {
  auto a = make_tensor_ptr(std::vector<float>{1});
  auto bias = make_tensor_ptr(std::vector<float>{2});
  auto l0 = make_tensor_ptr(std::vector<float>{0.25f});
  auto out = make_tensor_ptr(std::vector<float>{0});
  const int64_t dims[] = {3, 4};
  Tensor list[] = {*l0, *l0};
  EValue list_items[] = {EValue(list[0]), EValue(list[1])};
  EValue* list_ptrs[] = {&list_items[0], &list_items[1]};
  Tensor list_scratch[2];
  EValue int_items[] = {EValue(dims[0]), EValue(dims[1])};
  EValue* int_ptrs[] = {&int_items[0], &int_items[1]};
  int64_t int_scratch[2];

  auto run = [&](EValue bias_value, EValue maybe_value) {
    EValue values[] = {EValue(*a),
                       bias_value,
                       EValue(int64_t{5}),
                       EValue(int64_t{7}),
                       EValue(true),
                       EValue(BoxedList<int64_t>(int_ptrs, int_scratch, 2)),
                       maybe_value,
                       EValue(BoxedList<Tensor>(list_ptrs, list_scratch, 2), false),
                       EValue(std::string_view("ab")),
                       EValue(*out),
                       EValue()};
    EValue* args[11];
    for (int i = 0; i < 11; ++i) args[i] = &values[i];
    Allocators memory;
    EXPECT_TRUE(call_kernel(kMixed.kernel(), Span<EValue*>(args), &memory.allocator).ok());
    return out->const_data_ptr<float>()[0];
  };
  // 1 + 5 + 7 + 100 + 7000 + 0.5 (two list items) + 20000, plus bias and maybe.
  const float base = 1 + 5 + 7 + 100 + 7000 + 0.5f + 20000;
  EXPECT_FLOAT_EQ(run(EValue(*bias), EValue(0.25)), base + 2 + 0.25f);
  EXPECT_FLOAT_EQ(run(EValue(), EValue()), base - 0.5f);  // None: no bias, maybe defaults to -0.5.
}

TEST(UnboxedKernelTest, WrongArgumentsAreRefusedByTheSchemaCheck) {
  auto a = make_tensor_ptr(std::vector<float>{1});
  EValue values[] = {EValue(*a), EValue(*a), EValue(*a), EValue(*a), EValue()};
  EValue* args[] = {&values[0], &values[1], &values[2], &values[3], &values[4]};
  // alpha (argument 2) is a Tensor, not a float.
  EXPECT_THAT(check_call(Span<EValue* const>(args, 5), kScaledAdd.schema()),
              ErrorIs(Error::kInvalidType, "arg2"));
  // One argument short.
  EXPECT_THAT(check_call(Span<EValue* const>(args, 4), kScaledAdd.schema()),
              ErrorIs(Error::kInvalidArgument, "expected 5 arguments"));
}

TEST(UnboxedKernelTest, TheVoidKernelWritesWithoutAReturnSlot) {
  auto out = make_tensor_ptr({3}, std::vector<float>{0, 0, 0});
  EValue values[] = {EValue(2.5), EValue(*out)};
  EValue* args[] = {&values[0], &values[1]};
  Allocators memory;
  ASSERT_TRUE(call_kernel(kFill.kernel(), Span<EValue*>(args), &memory.allocator).ok());
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(out->const_data_ptr<float>()[i], 2.5f);
}

TEST(UnboxedKernelTest, ConstexprKernelsFormATable) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry.register_kernels(Span<const Kernel>(kTestTable)).ok());
  EXPECT_TRUE(registry.has_kernel("test_ops::scaled_add.out"));
  EXPECT_TRUE(registry.has_kernel("test_ops::fill.out"));
  EXPECT_EQ(kTestTable[0].schema, &kScaledAdd.schema());
}

TEST(UnboxedKernelTest, LinkedKernelsJoinTheDefaultRegistry) {
  bool listed = false;
  for (const LinkedKernel* k = LinkedKernel::first(); k != nullptr; k = k->next()) {
    listed = listed || std::string_view(k->kernel().name) == "test_ops::linked_scaled_add.out";
  }
  EXPECT_TRUE(listed);
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok());
  EXPECT_TRUE(registry.get()->has_kernel("test_ops::linked_scaled_add.out"));
  EXPECT_TRUE(registry.get()->has_kernel("aten::add.out"));

  // An explicit registry takes the same list; twice is a duplicate.
  StaticKernelRegistry<8> mine;
  ASSERT_TRUE(register_linked_kernels(mine).ok());
  EXPECT_TRUE(mine.has_kernel("test_ops::linked_scaled_add.out"));
  EXPECT_THAT(register_linked_kernels(mine), ErrorIs(Error::kInvalidArgument, "linked_scaled_add"));
}

}  // namespace
}  // namespace torchlight
