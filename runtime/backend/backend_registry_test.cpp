// Tests for BackendRegistry (backend_registry.h).
#include "runtime/backend/backend_registry.h"
#include "runtime/core/testing/error_matchers.h"

#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

class FakeBackend : public BackendInterface {
 public:
  explicit FakeBackend(bool available) : available_(available) {}
  bool is_available() const override { return available_; }
  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer*,
                               Span<const CompileSpec>) const override {
    return Error::kNotImplemented;
  }
  Status execute(BackendExecutionContext&, DelegateHandle*, Span<EValue*>) const override {
    return Error::kNotImplemented;
  }

 private:
  bool available_;
};

TEST(BackendRegistryTest, RegisterAndFind) {
  BackendRegistry registry;
  FakeBackend xnnpack(true);
  FakeBackend other(false);
  EXPECT_EQ(registry.size(), 0u);
  ASSERT_TRUE(registry.register_backend("XnnpackBackend", &xnnpack).ok());
  ASSERT_TRUE(registry.register_backend("OtherBackend", &other).ok());
  EXPECT_EQ(registry.size(), 2u);
  EXPECT_STREQ(registry.name(0), "XnnpackBackend");
  EXPECT_STREQ(registry.name(1), "OtherBackend");

  EXPECT_EQ(registry.find("XnnpackBackend"), &xnnpack);
  EXPECT_EQ(registry.find("OtherBackend"), &other);
  EXPECT_TRUE(registry.find("XnnpackBackend")->is_available());
  EXPECT_FALSE(registry.find("OtherBackend")->is_available());

  EXPECT_EQ(registry.find("Missing"), nullptr);
  EXPECT_EQ(registry.find(""), nullptr);
  EXPECT_EQ(registry.find("Xnnpack"), nullptr) << "a prefix is not a match";
  EXPECT_EQ(registry.find("XnnpackBackend2"), nullptr);
  EXPECT_EQ(registry.find("xnnpackbackend"), nullptr) << "names are case-sensitive";
}

TEST(BackendRegistryTest, FindTakesUnterminatedViews) {
  BackendRegistry registry;
  FakeBackend backend(true);
  ASSERT_TRUE(registry.register_backend("Vulkan", &backend).ok());
  const char text[] = "VulkanBackend";
  EXPECT_EQ(registry.find(std::string_view(text, 6)), &backend);
  EXPECT_EQ(registry.find(std::string_view(text, 5)), nullptr);
}

TEST(BackendRegistryTest, RejectsDuplicateNames) {
  BackendRegistry registry;
  FakeBackend a(true);
  FakeBackend b(true);
  ASSERT_TRUE(registry.register_backend("TestBackend", &a).ok());
  // Another object under the same name (compared by content) is refused.
  const std::string same = "TestBackend";
  Status s = registry.register_backend(same.c_str(), &b);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'TestBackend'"));
  EXPECT_THAT(s.message(), HasSubstr("twice"));
  EXPECT_EQ(registry.size(), 1u);
  EXPECT_EQ(registry.find("TestBackend"), &a);
  // The same object under another name is fine.
  EXPECT_TRUE(registry.register_backend("TestBackendAlias", &a).ok());
}

TEST(BackendRegistryTest, RejectsNullNameOrBackend) {
  BackendRegistry registry;
  FakeBackend a(true);
  EXPECT_THAT(registry.register_backend(nullptr, &a),
              ErrorIs(Error::kInvalidArgument,
                      "backend registered without a name or implementation"));
  EXPECT_THAT(registry.register_backend("Name", nullptr),
              ErrorIs(Error::kInvalidArgument,
                      "backend registered without a name or implementation"));
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(registry.find("Name"), nullptr);
}

TEST(BackendRegistryTest, FullRegistryIsOutOfResources) {
  BackendRegistry registry;
  FakeBackend backend(true);
  std::string names[BackendRegistry::kMaxBackends + 1];
  for (size_t i = 0; i <= BackendRegistry::kMaxBackends; ++i) {
    names[i] = "Backend" + std::to_string(i);
  }
  for (size_t i = 0; i < BackendRegistry::kMaxBackends; ++i) {
    ASSERT_TRUE(registry.register_backend(names[i].c_str(), &backend).ok()) << i;
  }
  EXPECT_EQ(registry.size(), BackendRegistry::kMaxBackends);
  Status s = registry.register_backend(names[BackendRegistry::kMaxBackends].c_str(), &backend);
  EXPECT_THAT(s, ErrorIs(Error::kOutOfResources, "full"));
  EXPECT_THAT(s.message(), HasSubstr("'Backend16'"));
  EXPECT_EQ(registry.size(), BackendRegistry::kMaxBackends);
  EXPECT_EQ(registry.find("Backend16"), nullptr);
  EXPECT_EQ(registry.find("Backend15"), &backend);
  EXPECT_EQ(registry.find("Backend0"), &backend);
  // A duplicate is still reported as a duplicate when full.
  EXPECT_THAT(registry.register_backend("Backend3", &backend),
              ErrorIs(Error::kInvalidArgument, "backend 'Backend3' is registered twice"));
}

TEST(BackendRegistryTest, InterfaceDefaults) {
  FakeBackend backend(true);
  const BackendInterface& iface = backend;
  BackendInitContext init_context;
  EXPECT_EQ(init_context.runtime_allocator, nullptr);
  EXPECT_STREQ(init_context.method_name, "");
  BackendExecutionContext exec_context;
  EXPECT_EQ(exec_context.temp_allocator, nullptr);
  EXPECT_EQ(exec_context.event_tracer, nullptr);
  Result<DelegateHandle*> handle = iface.init(init_context, nullptr, {});
  EXPECT_THAT(handle, ErrorIs(Error::kNotImplemented));
  EXPECT_THAT(iface.execute(exec_context, nullptr, {}), ErrorIs(Error::kNotImplemented));
  iface.destroy(nullptr);  // The default destroy does nothing.
}

}  // namespace
}  // namespace torchlight
