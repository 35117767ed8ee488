#include "tools/cli/timing.h"

#include <gtest/gtest.h>

namespace torchlight {
namespace cli {
namespace {

TEST(SummarizeLatencyTest, OddCountTakesTheMiddleSample) {
  const LatencyStats stats = summarize_latency({5.0, 1.0, 3.0});
  EXPECT_EQ(stats.runs, 3u);
  EXPECT_DOUBLE_EQ(stats.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(stats.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(stats.max_ms, 5.0);
}

TEST(SummarizeLatencyTest, EvenCountAveragesTheTwoMiddleSamples) {
  const LatencyStats stats = summarize_latency({4.0, 1.0, 2.0, 100.0});
  EXPECT_EQ(stats.runs, 4u);
  EXPECT_DOUBLE_EQ(stats.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(stats.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(stats.max_ms, 100.0);
}

TEST(SummarizeLatencyTest, SingleAndEmpty) {
  const LatencyStats one = summarize_latency({0.25});
  EXPECT_EQ(one.runs, 1u);
  EXPECT_DOUBLE_EQ(one.median_ms, 0.25);
  EXPECT_DOUBLE_EQ(one.min_ms, 0.25);
  EXPECT_DOUBLE_EQ(one.max_ms, 0.25);
  const LatencyStats none = summarize_latency({});
  EXPECT_EQ(none.runs, 0u);
  EXPECT_DOUBLE_EQ(none.median_ms, 0.0);
}

TEST(StopwatchTest, ElapsedGrowsAndRestartResets) {
  Stopwatch watch;
  volatile double sink = 0;
  for (int i = 0; i < 200000; ++i) sink = sink + i;
  const double first = watch.elapsed_ms();
  EXPECT_GE(first, 0.0);
  EXPECT_GE(watch.elapsed_ms(), first);
  watch.restart();
  EXPECT_LE(watch.elapsed_ms(), first + 1000.0);
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
