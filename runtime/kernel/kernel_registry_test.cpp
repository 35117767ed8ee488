// Tests for KernelRegistry (kernel_registry.h): registration rules and how
// resolve() chooses among kernels by key match, priority and specificity.
#include "runtime/kernel/kernel_registry.h"

#include <deque>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;
using ::testing::Not;

// Distinct functions, so a resolved kernel says which entry it came from.
void fn_portable(KernelContext&, Span<EValue*>) {}
void fn_optimized(KernelContext&, Span<EValue*>) {}
void fn_float(KernelContext&, Span<EValue*>) {}
void fn_int(KernelContext&, Span<EValue*>) {}
void fn_channels_last(KernelContext&, Span<EValue*>) {}
void fn_custom(KernelContext&, Span<EValue*>) {}

KernelKey::TensorConstraint dtype(ScalarType t, DimOrderKind order = DimOrderKind::kAny) {
  KernelKey::TensorConstraint c;
  c.any_dtype = false;
  c.dtype = t;
  c.dim_order = order;
  return c;
}

KernelKey::TensorConstraint any(DimOrderKind order = DimOrderKind::kAny) {
  KernelKey::TensorConstraint c;
  c.dim_order = order;
  return c;
}

// Constraint i names argument i, so tests list arguments as tensors in order.
KernelKey key(std::initializer_list<KernelKey::TensorConstraint> constraints) {
  KernelKey k;
  for (const auto& c : constraints) {
    k.tensors[k.num_tensors] = c;
    k.tensors[k.num_tensors].arg = static_cast<uint8_t>(k.num_tensors);
    ++k.num_tensors;
  }
  return k;
}

// Eight tensor arguments, enough for every key below.
constexpr ArgSpec kTensorArgs[] = {{"a", ArgType::kTensor}, {"b", ArgType::kTensor},
                                   {"c", ArgType::kTensor}, {"d", ArgType::kTensor},
                                   {"e", ArgType::kTensor}, {"f", ArgType::kTensor},
                                   {"g", ArgType::kTensor}, {"out", ArgType::kTensor, true}};

// A schema named `name` (kept alive for the test binary's lifetime).
const OpSchema* schema_named(const char* name) {
  if (name == nullptr) return nullptr;
  static std::deque<std::string> names;
  static std::deque<OpSchema> schemas;
  names.emplace_back(name);
  schemas.push_back(OpSchema{names.back().c_str(), "test(...)", kTensorArgs, 8, false});
  return &schemas.back();
}

Kernel kernel(const char* name, KernelFunction fn, KernelPriority priority = KernelPriority::kPortable,
              KernelKey k = {}) {
  Kernel result{name, fn};
  result.schema = schema_named(name);
  result.priority = priority;
  result.key = k;
  return result;
}

TensorArgMeta arg(ScalarType t, DimOrderKind order = DimOrderKind::kContiguous) {
  return {t, order};
}

// The function resolve() picks, or null with the failure recorded.
KernelFunction resolved(const KernelRegistry& registry, std::string_view name,
                        std::initializer_list<TensorArgMeta> args) {
  Result<const Kernel*> r = registry.resolve(name, {args.begin(), args.size()});
  if (!r.ok()) {
    ADD_FAILURE() << "resolve failed: " << r.status().message();
    return nullptr;
  }
  EXPECT_EQ(std::string_view((*r)->name), name);
  return (*r)->eval;
}

TEST(KernelKeyTest, Specificity) {
  EXPECT_EQ(KernelKey{}.specificity(), 0u);
  EXPECT_EQ(key({any()}).specificity(), 0u);
  EXPECT_EQ(key({dtype(ScalarType::kFloat)}).specificity(), 1u);
  EXPECT_EQ(key({any(DimOrderKind::kContiguous)}).specificity(), 1u);
  EXPECT_EQ(key({dtype(ScalarType::kFloat, DimOrderKind::kChannelsLast), any(),
                 dtype(ScalarType::kInt)})
                .specificity(),
            3u);
}

TEST(KernelRegistryTest, RegisterAndResolve) {
  StaticKernelRegistry<4> registry;
  EXPECT_TRUE(registry.kernels().empty());
  ASSERT_TRUE(registry.register_kernel(kernel("aten::add.out", fn_portable)).ok());
  ASSERT_TRUE(registry.register_kernel(kernel("aten::mul.out", fn_float)).ok());
  EXPECT_EQ(registry.kernels().size(), 2u);
  EXPECT_TRUE(registry.has_kernel("aten::add.out"));
  EXPECT_TRUE(registry.has_kernel("aten::mul.out"));
  EXPECT_FALSE(registry.has_kernel("aten::add"));
  EXPECT_FALSE(registry.has_kernel("aten::add.out "));
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kFloat)}), &fn_portable);
  EXPECT_EQ(resolved(registry, "aten::mul.out", {}), &fn_float);
  // The returned entry is the registry's copy.
  Result<const Kernel*> r = registry.resolve("aten::add.out", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, &registry.kernels()[0]);
}

TEST(KernelRegistryTest, ExternalStorage) {
  Kernel storage[2];
  KernelRegistry registry(Span<Kernel>(storage, 2));
  ASSERT_TRUE(registry.register_kernel(kernel("a::b", fn_int)).ok());
  EXPECT_EQ(storage[0].eval, &fn_int);
  EXPECT_EQ(registry.kernels().data(), storage);
}

TEST(KernelRegistryTest, RejectsNullNameOrFunction) {
  StaticKernelRegistry<4> registry;
  Status no_name = registry.register_kernel(kernel(nullptr, fn_portable));
  EXPECT_THAT(no_name, ErrorIs(Error::kInvalidArgument, "without a name or eval function"));
  Status no_fn = registry.register_kernel(kernel("aten::add.out", nullptr));
  EXPECT_THAT(no_fn, ErrorIs(Error::kInvalidArgument, "without a name or eval function"));
  EXPECT_TRUE(registry.kernels().empty());
}

TEST(KernelRegistryTest, RejectsMissingOrMismatchedSchema) {
  StaticKernelRegistry<4> registry;
  Kernel none = kernel("aten::add.out", fn_portable);
  none.schema = nullptr;
  Status s = registry.register_kernel(none);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "has no schema"));
  EXPECT_THAT(s.message(), HasSubstr("'aten::add.out' has no schema"));
  Kernel other = kernel("aten::add.out", fn_portable);
  other.schema = schema_named("aten::sub.out");
  s = registry.register_kernel(other);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "carries the schema of 'aten::sub.out'"));
  EXPECT_THAT(s.message(), HasSubstr("'aten::add.out' carries the schema of 'aten::sub.out'"));
  EXPECT_TRUE(registry.kernels().empty());
}

TEST(KernelRegistryTest, RejectsKeyOnAnArgumentThatIsNotATensor) {
  static constexpr ArgSpec kArgs[] = {{"self", ArgType::kTensor}, {"alpha", ArgType::kScalar},
                               {"out", ArgType::kTensor, true}};
  static constexpr OpSchema kSchema{"op::scaled", "scaled(...)", kArgs, 3, false};
  StaticKernelRegistry<4> registry;
  Kernel k{"op::scaled", fn_float};
  k.schema = &kSchema;
  k.key.num_tensors = 1;
  k.key.tensors[0].arg = 1;
  k.key.tensors[0].any_dtype = false;
  Status s = registry.register_kernel(k);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "which is a Scalar, not a tensor"));
  EXPECT_THAT(s.message(), HasSubstr("argument 'alpha', which is a Scalar, not a tensor"));
  k.key.tensors[0].arg = 3;
  s = registry.register_kernel(k);
  EXPECT_THAT(s.message(), HasSubstr("key on argument 3, but its schema has 3"));
  k.key.tensors[0].arg = 2;
  EXPECT_TRUE(registry.register_kernel(k).ok());
}

TEST(KernelRegistryTest, RejectsKeyWithTooManyTensors) {
  StaticKernelRegistry<4> registry;
  Kernel k = kernel("aten::cat.out", fn_portable);
  k.key.num_tensors = KernelKey::kMaxTensors + 1;
  Status s = registry.register_kernel(k);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "9 tensors, more than 8"));
  EXPECT_THAT(s.message(), HasSubstr("aten::cat.out"));
  EXPECT_THAT(s.message(), HasSubstr("9 tensors"));
  EXPECT_TRUE(registry.kernels().empty());
}

TEST(KernelRegistryTest, RejectsDuplicatesWithMessage) {
  StaticKernelRegistry<8> registry;
  const KernelKey f32 = key({dtype(ScalarType::kFloat)});
  ASSERT_TRUE(registry.register_kernel(kernel("aten::add.out", fn_portable)).ok());
  ASSERT_TRUE(
      registry.register_kernel(kernel("aten::add.out", fn_float, KernelPriority::kPortable, f32))
          .ok());

  // Same name, priority and key: rejected, even with another function.
  Status dup = registry.register_kernel(kernel("aten::add.out", fn_optimized));
  EXPECT_THAT(dup, ErrorIs(Error::kInvalidArgument, "registered twice"));
  EXPECT_THAT(dup.message(), HasSubstr("'aten::add.out'"));
  EXPECT_THAT(dup.message(), HasSubstr("twice"));
  Status dup_key =
      registry.register_kernel(kernel("aten::add.out", fn_int, KernelPriority::kPortable, f32));
  EXPECT_THAT(dup_key, ErrorIs(Error::kInvalidArgument, "registered twice"));
  // The name is compared by content, not by pointer.
  const std::string copy = "aten::add.out";
  Status dup_copy = registry.register_kernel(kernel(copy.c_str(), fn_int));
  EXPECT_THAT(dup_copy, ErrorIs(Error::kInvalidArgument, "registered twice"));
  EXPECT_EQ(registry.kernels().size(), 2u);

  // Another priority, dtype or dim order is a different entry.
  EXPECT_TRUE(registry.register_kernel(kernel("aten::add.out", fn_optimized,
                                              KernelPriority::kOptimized))
                  .ok());
  EXPECT_TRUE(registry
                  .register_kernel(kernel("aten::add.out", fn_int, KernelPriority::kPortable,
                                          key({dtype(ScalarType::kInt)})))
                  .ok());
  EXPECT_TRUE(registry
                  .register_kernel(kernel("aten::add.out", fn_channels_last,
                                          KernelPriority::kPortable,
                                          key({dtype(ScalarType::kFloat,
                                                     DimOrderKind::kChannelsLast)})))
                  .ok());
  EXPECT_EQ(registry.kernels().size(), 5u);
}

TEST(KernelRegistryTest, FullRegistryIsOutOfResources) {
  StaticKernelRegistry<2> registry;
  ASSERT_TRUE(registry.register_kernel(kernel("op::a", fn_portable)).ok());
  ASSERT_TRUE(registry.register_kernel(kernel("op::b", fn_portable)).ok());
  Status s = registry.register_kernel(kernel("op::c", fn_portable));
  EXPECT_THAT(s, ErrorIs(Error::kOutOfResources, "registry is full (2 entries) registering 'op::c'"));
  EXPECT_THAT(s.message(), HasSubstr("full"));
  EXPECT_THAT(s.message(), HasSubstr("'op::c'"));
  EXPECT_THAT(s.message(), HasSubstr("2 entries"));
  EXPECT_EQ(registry.kernels().size(), 2u);
  EXPECT_FALSE(registry.has_kernel("op::c"));

  KernelRegistry zero(Span<Kernel>{});
  EXPECT_THAT(zero.register_kernel(kernel("op::a", fn_portable)), ErrorIs(Error::kOutOfResources, "registry is full (0 entries)"));
}

TEST(KernelRegistryTest, RegisterKernelsStopsAtFirstError) {
  StaticKernelRegistry<8> registry;
  const Kernel table[] = {
      kernel("op::a", fn_portable),
      kernel("op::a", fn_optimized),  // duplicate of the first
      kernel("op::b", fn_portable),
  };
  Status s = registry.register_kernels(table);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "registered twice"));
  EXPECT_EQ(registry.kernels().size(), 1u);
  EXPECT_FALSE(registry.has_kernel("op::b"));

  StaticKernelRegistry<8> ok;
  const Kernel good[] = {kernel("op::a", fn_portable), kernel("op::b", fn_int)};
  EXPECT_TRUE(ok.register_kernels(good).ok());
  EXPECT_EQ(ok.kernels().size(), 2u);
}

// An optimized library registers float32 contiguous only; everything else
// falls back to the generic portable kernel.
TEST(KernelRegistryTest, HigherPriorityOverridesWhereItsKeyMatches) {
  StaticKernelRegistry<8> registry;
  ASSERT_TRUE(registry.register_kernel(kernel("aten::add.out", fn_portable)).ok());
  ASSERT_TRUE(registry
                  .register_kernel(kernel(
                      "aten::add.out", fn_optimized, KernelPriority::kOptimized,
                      key({dtype(ScalarType::kFloat, DimOrderKind::kContiguous),
                           dtype(ScalarType::kFloat, DimOrderKind::kContiguous)})))
                  .ok());
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kFloat), arg(ScalarType::kFloat)}),
            &fn_optimized);
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kInt), arg(ScalarType::kInt)}),
            &fn_portable);
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kFloat), arg(ScalarType::kInt)}),
            &fn_portable);
  EXPECT_EQ(resolved(registry, "aten::add.out",
                     {arg(ScalarType::kFloat, DimOrderKind::kChannelsLast),
                      arg(ScalarType::kFloat)}),
            &fn_portable);
  // Fewer tensors than the key constrains: no match, fall back.
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kFloat)}), &fn_portable);

  // A generic custom kernel beats both, whatever the key specificity.
  ASSERT_TRUE(
      registry.register_kernel(kernel("aten::add.out", fn_custom, KernelPriority::kCustom)).ok());
  EXPECT_EQ(resolved(registry, "aten::add.out", {arg(ScalarType::kFloat), arg(ScalarType::kFloat)}),
            &fn_custom);
}

TEST(KernelRegistryTest, PriorityWinsRegardlessOfRegistrationOrder) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry
                  .register_kernel(kernel("aten::relu.out", fn_optimized,
                                          KernelPriority::kOptimized))
                  .ok());
  ASSERT_TRUE(registry.register_kernel(kernel("aten::relu.out", fn_portable)).ok());
  EXPECT_EQ(resolved(registry, "aten::relu.out", {arg(ScalarType::kFloat)}), &fn_optimized);
}

TEST(KernelRegistryTest, SpecificKeyBeatsGenericAtEqualPriority) {
  for (bool specific_first : {false, true}) {
    StaticKernelRegistry<4> registry;
    const Kernel generic = kernel("aten::mul.out", fn_portable);
    const Kernel specific = kernel("aten::mul.out", fn_float, KernelPriority::kPortable,
                                   key({dtype(ScalarType::kFloat)}));
    ASSERT_TRUE(registry.register_kernel(specific_first ? specific : generic).ok());
    ASSERT_TRUE(registry.register_kernel(specific_first ? generic : specific).ok());
    EXPECT_EQ(resolved(registry, "aten::mul.out", {arg(ScalarType::kFloat)}), &fn_float)
        << specific_first;
    EXPECT_EQ(resolved(registry, "aten::mul.out", {arg(ScalarType::kDouble)}), &fn_portable)
        << specific_first;
    EXPECT_EQ(resolved(registry, "aten::mul.out", {}), &fn_portable) << specific_first;
  }
}

TEST(KernelRegistryTest, DimOrderKeySelectsLayout) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry.register_kernel(kernel("aten::convolution.out", fn_portable)).ok());
  ASSERT_TRUE(registry
                  .register_kernel(kernel("aten::convolution.out", fn_channels_last,
                                          KernelPriority::kPortable,
                                          key({any(DimOrderKind::kChannelsLast)})))
                  .ok());
  EXPECT_EQ(resolved(registry, "aten::convolution.out",
                     {arg(ScalarType::kFloat, DimOrderKind::kChannelsLast)}),
            &fn_channels_last);
  EXPECT_EQ(resolved(registry, "aten::convolution.out",
                     {arg(ScalarType::kHalf, DimOrderKind::kChannelsLast)}),
            &fn_channels_last);
  EXPECT_EQ(resolved(registry, "aten::convolution.out", {arg(ScalarType::kFloat)}), &fn_portable);
  EXPECT_EQ(resolved(registry, "aten::convolution.out",
                     {arg(ScalarType::kFloat, DimOrderKind::kAny)}),
            &fn_portable)
      << "an irregular layout only matches kAny";
}

TEST(KernelRegistryTest, UnknownOperatorIsOperatorMissing) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry.register_kernel(kernel("aten::add.out", fn_portable)).ok());
  Result<const Kernel*> r = registry.resolve("aten::sub.out", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, ErrorIs(Error::kOperatorMissing, "'aten::sub.out'"));
  EXPECT_STREQ(r.status().message(), "no kernel is registered for operator 'aten::sub.out'");

  // The name is a view: only its own characters are printed and compared.
  const char text[] = "aten::add.outXYZ";
  Result<const Kernel*> view = registry.resolve(std::string_view(text, 10), {});
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view, ErrorIs(Error::kOperatorMissing, "'aten::add.'"));
  EXPECT_THAT(view.status().message(), HasSubstr("'aten::add.'"));
  EXPECT_THAT(view.status().message(), Not(HasSubstr("XYZ")));
  Result<const Kernel*> full = registry.resolve(std::string_view(text, 13), {});
  EXPECT_TRUE(full.ok());

  StaticKernelRegistry<1> empty;
  EXPECT_THAT(empty.resolve("aten::add.out", {}), ErrorIs(Error::kOperatorMissing, "'aten::add.out'"));
}

TEST(KernelRegistryTest, KnownOperatorWithoutMatchingDtypeIsOperatorMissing) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry
                  .register_kernel(kernel("aten::sin.out", fn_float, KernelPriority::kPortable,
                                          key({dtype(ScalarType::kFloat)})))
                  .ok());
  ASSERT_TRUE(registry
                  .register_kernel(kernel("aten::sin.out", fn_optimized,
                                          KernelPriority::kOptimized,
                                          key({dtype(ScalarType::kDouble)})))
                  .ok());
  EXPECT_TRUE(registry.has_kernel("aten::sin.out"));
  const TensorArgMeta longs[] = {arg(ScalarType::kLong)};
  Result<const Kernel*> r = registry.resolve("aten::sin.out", longs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, ErrorIs(Error::kOperatorMissing, "none for these argument dtypes (first: int64)"));
  EXPECT_THAT(r.status().message(), HasSubstr("'aten::sin.out'"));
  EXPECT_THAT(r.status().message(), HasSubstr("int64"));
  EXPECT_THAT(r.status().message(), HasSubstr("none for these argument dtypes"));

  Result<const Kernel*> no_args = registry.resolve("aten::sin.out", {});
  ASSERT_FALSE(no_args.ok());
  EXPECT_THAT(no_args, ErrorIs(Error::kOperatorMissing, "(first: no tensors)"));
  EXPECT_THAT(no_args.status().message(), HasSubstr("no tensors"));

  EXPECT_EQ(resolved(registry, "aten::sin.out", {arg(ScalarType::kDouble)}), &fn_optimized);
  EXPECT_EQ(resolved(registry, "aten::sin.out", {arg(ScalarType::kFloat)}), &fn_float);
}

TEST(KernelRegistryTest, KeyConstrainsTensorsByPosition) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(registry
                  .register_kernel(kernel("aten::index.out", fn_int, KernelPriority::kPortable,
                                          key({any(), dtype(ScalarType::kLong)})))
                  .ok());
  EXPECT_EQ(resolved(registry, "aten::index.out",
                     {arg(ScalarType::kFloat), arg(ScalarType::kLong), arg(ScalarType::kFloat)}),
            &fn_int);
  EXPECT_FALSE(
      registry.resolve("aten::index.out", {}).ok());
  const TensorArgMeta swapped[] = {arg(ScalarType::kLong), arg(ScalarType::kFloat)};
  EXPECT_THAT(registry.resolve("aten::index.out", swapped), ErrorIs(Error::kOperatorMissing, "none for these argument dtypes (first: int64)"));
}

}  // namespace
}  // namespace torchlight
