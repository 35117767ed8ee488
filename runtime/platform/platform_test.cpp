// The platform layer is overridable at link time: this test binary defines
// strong versions of the weak defaults and checks the runtime calls them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/platform/assert.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace {
std::vector<std::pair<int, std::string>> g_logged;
uint64_t g_fake_now = 1000;
}  // namespace

extern "C" void tl_platform_log(TlLogLevel level, const char* file, int line, const char* message) {
  (void)file;
  (void)line;
  g_logged.emplace_back(level, message);
}

extern "C" uint64_t tl_platform_monotonic_ns(void) { return g_fake_now += 5; }

namespace torchlight {
namespace {

TEST(PlatformTest, LogGoesThroughTheOverride) {
  g_logged.clear();
  set_min_log_level(kTlLogInfo);
  TL_LOG(kTlLogWarning, "value %d is %s", 7, "odd");
  ASSERT_EQ(g_logged.size(), 1u);
  EXPECT_EQ(g_logged[0].first, kTlLogWarning);
  EXPECT_EQ(g_logged[0].second, "value 7 is odd");
}

TEST(PlatformTest, MessagesBelowTheLevelAreDropped) {
  g_logged.clear();
  set_min_log_level(kTlLogError);
  TL_LOG(kTlLogInfo, "hidden");
  TL_LOG(kTlLogError, "shown");
  ASSERT_EQ(g_logged.size(), 1u);
  EXPECT_EQ(g_logged[0].second, "shown");
  set_min_log_level(kTlLogWarning);
}

TEST(PlatformTest, LongMessagesAreCutNotOverrun) {
  g_logged.clear();
  set_min_log_level(kTlLogDebug);
  const std::string big(5000, 'x');
  TL_LOG(kTlLogInfo, "%s", big.c_str());
  ASSERT_EQ(g_logged.size(), 1u);
  EXPECT_LT(g_logged[0].second.size(), 1024u);
  EXPECT_GT(g_logged[0].second.size(), 100u);
  set_min_log_level(kTlLogWarning);
}

TEST(PlatformTest, TimeGoesThroughTheOverride) {
  const uint64_t a = tl_platform_monotonic_ns();
  const uint64_t b = tl_platform_monotonic_ns();
  EXPECT_EQ(b - a, 5u);
}

TEST(PlatformDeathTest, DebugAssertAbortsThroughThePlatform) {
#ifndef NDEBUG
  EXPECT_DEATH({ TL_DEBUG_ASSERT(1 + 1 == 3); }, "");
#else
  GTEST_SKIP() << "debug asserts are compiled out in this configuration";
#endif
}

}  // namespace
}  // namespace torchlight
