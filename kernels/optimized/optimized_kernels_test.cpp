// The optimized table: registration, and resolution against the portable
// library (float32 picks optimized, every other dtype portable), alone and
// through all_kernels().
#include "kernels/optimized/optimized_kernels.h"

#include <gtest/gtest.h>

#include <memory>
#include <string_view>
#include <vector>

#include "kernels/all_kernels.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

TensorArgMeta meta(ScalarType dtype, DimOrderKind order = DimOrderKind::kContiguous) {
  return TensorArgMeta{dtype, order};
}

TEST(OptimizedKernelsTest, TableListsItsKernelsAtOptimizedPriority) {
  const Span<const Kernel> kernels = optimized_kernels();
  ASSERT_EQ(kernels.size(), 10u);
  for (const Kernel& k : kernels) {
    EXPECT_EQ(k.priority, KernelPriority::kOptimized) << k.name;
    EXPECT_GE(k.key.num_tensors, 2u) << k.name;
    for (size_t i = 0; i < k.key.num_tensors; ++i) {
      EXPECT_FALSE(k.key.tensors[i].any_dtype) << k.name;
      EXPECT_EQ(k.key.tensors[i].dtype, ScalarType::kFloat) << k.name;
      EXPECT_EQ(k.key.tensors[i].dim_order, DimOrderKind::kAny) << k.name;
    }
  }
}

TEST(OptimizedKernelsTest, RegisteringTwiceIsADuplicate) {
  StaticKernelRegistry<16> registry;
  ASSERT_TRUE(register_optimized_kernels(registry).ok());
  const Status again = register_optimized_kernels(registry);
  EXPECT_THAT(again, ErrorIs(Error::kInvalidArgument,
                             "kernel 'aten::addmm.out' is registered twice with the same"));
  StaticKernelRegistry<2> small;
  EXPECT_THAT(register_optimized_kernels(small),
              ErrorIs(Error::kOutOfResources,
                      "kernel registry is full (2 entries) registering"));
}

TEST(OptimizedKernelsTest, FloatResolvesToOptimizedOtherDtypesToPortable) {
  StaticKernelRegistry<1024> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  ASSERT_TRUE(register_optimized_kernels(registry).ok());
  const TensorArgMeta f32[] = {meta(ScalarType::kFloat), meta(ScalarType::kFloat),
                               meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  const TensorArgMeta f16[] = {meta(ScalarType::kHalf), meta(ScalarType::kHalf),
                               meta(ScalarType::kHalf), meta(ScalarType::kHalf)};
  // Any layout stays on the optimized kernel, which reads strides.
  const TensorArgMeta f32_permuted[] = {meta(ScalarType::kFloat, DimOrderKind::kAny),
                                        meta(ScalarType::kFloat, DimOrderKind::kAny),
                                        meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  Result<const Kernel*> mm = registry.resolve("aten::mm.out", {f32, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &optimized::mm_out);
  mm = registry.resolve("aten::mm.out", {f32_permuted, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &optimized::mm_out);
  mm = registry.resolve("aten::mm.out", {f16, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &portable::mm_out);

  // convolution(input, weight, bias?, stride, padding, dilation, transposed,
  // output_padding, groups, out): keyed on input, weight and out.
  const TensorArgMeta scalar_arg = {ScalarType::kLong, DimOrderKind::kAny, false};
  const TensorArgMeta conv_f32[] = {f32[0],     f32[0],     scalar_arg, scalar_arg, scalar_arg,
                                    scalar_arg, scalar_arg, scalar_arg, scalar_arg, f32[0]};
  const TensorArgMeta conv_f16[] = {f16[0],     f16[0],     scalar_arg, scalar_arg, scalar_arg,
                                    scalar_arg, scalar_arg, scalar_arg, scalar_arg, f16[0]};
  Result<const Kernel*> conv = registry.resolve("aten::convolution.out", {conv_f32, 10});
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(conv.get()->eval, &optimized::convolution_out);
  conv = registry.resolve("aten::convolution.out", {conv_f16, 10});
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(conv.get()->eval, &portable::convolution_out);

  // Metas follow schema positions: addmm's beta and alpha are not tensors.
  const TensorArgMeta scalar = {ScalarType::kFloat, DimOrderKind::kAny, false};
  const TensorArgMeta f32_addmm[] = {f32[0], f32[0], f32[0], scalar, scalar, f32[0]};
  const TensorArgMeta f32_linear_no_bias[] = {f32[0], f32[0], scalar, f32[0]};
  const TensorArgMeta f32_linear_f16_out[] = {f32[0], f32[0], scalar, f16[0]};
  Result<const Kernel*> addmm = registry.resolve("aten::addmm.out", f32_addmm);
  ASSERT_TRUE(addmm.ok());
  EXPECT_EQ(addmm.get()->eval, &optimized::addmm_out);
  Result<const Kernel*> bmm = registry.resolve("aten::bmm.out", {f16, 3});
  ASSERT_TRUE(bmm.ok());
  EXPECT_EQ(bmm.get()->eval, &portable::bmm_out);
  // linear without bias: the key skips the absent bias and checks out.
  Result<const Kernel*> linear = registry.resolve("aten::linear.out", f32_linear_no_bias);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(linear.get()->eval, &optimized::linear_out);
  linear = registry.resolve("aten::linear.out", f32_linear_f16_out);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(linear.get()->eval, &portable::linear_out);
}

TEST(OptimizedKernelsTest, AllKernelsPicksOptimizedForFloat) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  // By schema position: linear(input, weight, bias, out) with a float bias.
  const TensorArgMeta f32[] = {meta(ScalarType::kFloat), meta(ScalarType::kFloat),
                               meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  for (std::string_view name : {"aten::mm.out", "aten::bmm.out", "aten::linear.out"}) {
    Result<const Kernel*> kernel = registry.get()->resolve(name, {f32, 4});
    ASSERT_TRUE(kernel.ok()) << name;
    EXPECT_EQ(kernel.get()->priority, KernelPriority::kOptimized) << name;
  }
}

const Kernel& optimized_kernel_named(std::string_view name) {
  for (const Kernel& k : optimized_kernels()) {
    if (name == k.name) return k;
  }
  ADD_FAILURE() << "no optimized kernel " << name;
  return optimized_kernels()[0];
}

// What the program fixes (ranks, dtypes a key leaves free) is rejected by
// prepare, at load, naming the argument with the eval's reason; a good call
// prepares gemm's scratch.
TEST(OptimizedKernelsTest, PrepareRejectsRanksAndDtypesAtLoad) {
  using portable::kernel_test::KernelArgs;
  using portable::kernel_test::TestTensor;
  TestTensor m23(ScalarType::kFloat, {2, 3});
  TestTensor m32(ScalarType::kFloat, {3, 2});
  TestTensor m22(ScalarType::kFloat, {2, 2});
  TestTensor v3(ScalarType::kFloat, {3});
  TestTensor b232(ScalarType::kFloat, {2, 3, 2});
  TestTensor b222(ScalarType::kFloat, {2, 2, 2});
  TestTensor h2(ScalarType::kHalf, {2});
  TestTensor scalar(ScalarType::kFloat, {});
  TestTensor w3d(ScalarType::kFloat, {1, 2, 3});
  auto expect = [](std::string_view name, KernelArgs& args, Error code, const char* reason) {
    SCOPED_TRACE(std::string(name));
    const Kernel& kernel = optimized_kernel_named(name);
    PreparedCall call;
    call.eval = kernel.eval;
    PrepareContext context(nullptr, kernel.name);
    const Status status = kernel.prepare(context, args.span(), &call);
    if (code == Error::kOk) {
      EXPECT_TRUE(status.ok()) << status.message();
      EXPECT_GT(call.scratch_bytes, 0u);
      return;
    }
    EXPECT_THAT(status, ErrorIs(code, reason));
    // The eval refuses the same call with the same reason.
    KernelContext ctx(nullptr, nullptr, kernel.name);
    kernel.eval(ctx, args.span());
    EXPECT_THAT(ctx.status(), ErrorIs(code, reason));
  };
  KernelArgs mm_ok{m23.evalue(), m32.evalue(), m22.evalue(), EValue()};
  expect("aten::mm.out", mm_ok, Error::kOk, "");
  KernelArgs mm_vector{m23.evalue(), v3.evalue(), m22.evalue(), EValue()};
  expect("aten::mm.out", mm_vector, Error::kInvalidArgument, "argument 'mat2'");
  KernelArgs bmm_ok{b232.evalue(), b222.evalue(), b222.evalue(), EValue()};
  expect("aten::bmm.out", bmm_ok, Error::kOk, "");
  KernelArgs bmm_matrix{m23.evalue(), b222.evalue(), b222.evalue(), EValue()};
  expect("aten::bmm.out", bmm_matrix, Error::kInvalidArgument, "argument 'self'");
  KernelArgs addmm_ok{m22.evalue(), m23.evalue(), m32.evalue(), EValue(int64_t{1}),
                      EValue(int64_t{1}), m22.evalue(), EValue()};
  expect("aten::addmm.out", addmm_ok, Error::kOk, "");
  KernelArgs addmm_half_self{h2.evalue(), m23.evalue(), m32.evalue(), EValue(int64_t{1}),
                             EValue(int64_t{1}), m22.evalue(), EValue()};
  expect("aten::addmm.out", addmm_half_self, Error::kInvalidType,
         "argument 'self' has dtype float16");
  KernelArgs linear_ok{m23.evalue(), m23.evalue(), EValue(), m22.evalue(), EValue()};
  expect("aten::linear.out", linear_ok, Error::kOk, "");
  KernelArgs linear_half_bias{m23.evalue(), m23.evalue(), h2.evalue(), m22.evalue(), EValue()};
  expect("aten::linear.out", linear_half_bias, Error::kInvalidType,
         "argument 'bias' has dtype float16");
  KernelArgs linear_scalar{scalar.evalue(), m23.evalue(), EValue(), m22.evalue(), EValue()};
  expect("aten::linear.out", linear_scalar, Error::kInvalidArgument,
         "argument 'input' must have at least 1 dimension");
  KernelArgs linear_3d_weight{m23.evalue(), w3d.evalue(), EValue(), m22.evalue(), EValue()};
  expect("aten::linear.out", linear_3d_weight, Error::kInvalidArgument,
         "argument 'weight' must be a matrix");
}

}  // namespace
}  // namespace torchlight
