// sdpa_prefetch_of: which cache rows a work item prefetches while it runs
// (the next item's key/value head, when it is another head, and only that
// item's longest valid prefix, so never past the cache), against
// the plan's own numbering of items, on decode, grouped, multi-query,
// batched, prefill and start_pos problems.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/llm/sdpa_dispatch.h"

namespace torchlight::llm {
namespace {

// A [B, H, S, D] problem (dense caches) with `pos` as input_pos; the plan
// for `threads`. Only what sdpa_prefetch_of reads is set.
struct Problem {
  Problem(int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t cache_len, int64_t dim,
          std::vector<int64_t> positions, size_t threads)
      : pos(std::move(positions)) {
    p.batch = batch;
    p.q_heads = q_heads;
    p.kv_heads = kv_heads;
    p.rows = static_cast<int64_t>(pos.size());
    p.head_dim = dim;
    p.input_pos = pos.data();
    p.input_pos_stride = 1;
    const int64_t strides[3] = {kv_heads * cache_len * dim, cache_len * dim, dim};
    for (int d = 0; d < 3; ++d) {
      p.key_cache_strides[d] = strides[d];
      p.value_cache_strides[d] = 2 * strides[d];  // Unlike the keys', to tell them apart.
    }
    sdpa_plan_work(p, threads);
  }

  std::vector<int64_t> pos;
  SdpaProblem p{};
};

// What sdpa_prefetch_of must give for item `item`, from the plan's
// definition of items (sdpa_problem.h): item = (b * Hkv + g) *
// blocks_per_group + block, the block's rows numbered i * n_rep + r.
SdpaPrefetch expected_prefetch(const SdpaProblem& p, size_t item) {
  const int64_t next = static_cast<int64_t>(item) + 1;
  const int64_t items = p.batch * p.kv_heads * p.blocks_per_group;
  if (next >= items ||
      next / p.blocks_per_group == static_cast<int64_t>(item) / p.blocks_per_group) {
    return SdpaPrefetch{0, 0, 0};
  }
  const int64_t group = next / p.blocks_per_group;
  const int64_t n_rep = p.q_heads / p.kv_heads;
  const int64_t first = (next % p.blocks_per_group) * p.rows_per_block;
  const int64_t last = std::min(first + p.rows_per_block, n_rep * p.rows);
  int64_t rows = 0;
  for (int64_t r = first; r < last; ++r) {
    const int64_t i = r / n_rep;
    const int64_t limit = p.input_pos != nullptr ? p.input_pos[i] + 1
                          : p.causal           ? p.start_pos + i + 1
                                               : p.start_pos + p.rows;
    rows = std::max(rows, limit);
  }
  const int64_t b = group / p.kv_heads;
  const int64_t g = group % p.kv_heads;
  return SdpaPrefetch{b * p.key_cache_strides[0] + g * p.key_cache_strides[1],
                      b * p.value_cache_strides[0] + g * p.value_cache_strides[1], rows};
}

// Every item (and one past the last), and rows within the cache.
void expect_every_item(const SdpaProblem& p, int64_t cache_len) {
  const size_t items = sdpa_work_items(p);
  ASSERT_GT(items, 0u);
  for (size_t item = 0; item <= items; ++item) {
    const SdpaPrefetch got = sdpa_prefetch_of(p, item);
    const SdpaPrefetch want = expected_prefetch(p, item);
    SCOPED_TRACE("item " + std::to_string(item));
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_LE(got.rows, cache_len);
    if (want.rows > 0) {
      EXPECT_EQ(got.key_offset, want.key_offset);
      EXPECT_EQ(got.value_offset, want.value_offset);
    }
  }
}

TEST(SdpaPrefetchTest, DecodePrefetchesTheNextHeadsValidRows) {
  // stories110M's decode at position 159: 12 items, one a head.
  Problem d(1, 12, 12, 1024, 64, {159}, 1);
  ASSERT_EQ(sdpa_work_items(d.p), 12u);
  const SdpaPrefetch first = sdpa_prefetch_of(d.p, 0);
  EXPECT_EQ(first.rows, 160);
  EXPECT_EQ(first.key_offset, 1024 * 64);  // Head 1.
  EXPECT_EQ(first.value_offset, 2 * 1024 * 64);
  // Across a chunk's end (chunks of 2 at 2 threads): the next head all the same.
  EXPECT_EQ(sdpa_prefetch_of(d.p, 5).key_offset, 6 * 1024 * 64);
  EXPECT_EQ(sdpa_prefetch_of(d.p, 10).key_offset, 11 * 1024 * 64);
  // The last item: nothing.
  EXPECT_EQ(sdpa_prefetch_of(d.p, 11).rows, 0);
  expect_every_item(d.p, 1024);
}

TEST(SdpaPrefetchTest, TheLastPositionOfTheCacheIsTheLastRowPrefetched) {
  Problem d(1, 4, 4, 300, 64, {299}, 1);
  EXPECT_EQ(sdpa_prefetch_of(d.p, 0).rows, 300);
  expect_every_item(d.p, 300);
}

TEST(SdpaPrefetchTest, BlocksOfTheSameHeadPrefetchNothing) {
  // Multi-query decode at 2 threads: 12 rows of one head cut into 2 blocks.
  Problem mq(1, 12, 1, 64, 16, {40}, 2);
  ASSERT_EQ(mq.p.blocks_per_group, 2);
  EXPECT_EQ(sdpa_prefetch_of(mq.p, 0).rows, 0);
  expect_every_item(mq.p, 64);
  // Grouped, fewer groups than threads: 3 blocks of 2 rows a head; the
  // third block's successor is the next head's first block (position row 0).
  Problem gq(1, 4, 2, 64, 8, {3, 4, 5}, 8);
  ASSERT_EQ(gq.p.blocks_per_group, 3);
  EXPECT_EQ(sdpa_prefetch_of(gq.p, 0).rows, 0);
  EXPECT_EQ(sdpa_prefetch_of(gq.p, 2).rows, 4);
  expect_every_item(gq.p, 64);
}

TEST(SdpaPrefetchTest, RowsAreTheLongestPrefixOfTheNextBlocksRows) {
  // Positions out of order: the next block's longest prefix is 10, not the last row's.
  Problem rows(1, 6, 3, 32, 8, {5, 9, 7}, 1);
  EXPECT_EQ(sdpa_prefetch_of(rows.p, 0).rows, 10);
  expect_every_item(rows.p, 32);
  // Prefill blocks of 16 rows over 40 positions, grouped, 2 threads.
  std::vector<int64_t> prefill(40);
  for (int64_t i = 0; i < 40; ++i) prefill[static_cast<size_t>(i)] = 10 + i;
  Problem blocks(1, 8, 2, 64, 8, prefill, 2);
  expect_every_item(blocks.p, 64);
}

TEST(SdpaPrefetchTest, TheNextItemMayBeInTheNextBatch) {
  Problem batch(2, 12, 4, 300, 64, {200}, 1);
  const SdpaPrefetch next = sdpa_prefetch_of(batch.p, 3);  // (b 0, g 3) -> (b 1, g 0)
  EXPECT_EQ(next.key_offset, 4 * 300 * 64);
  EXPECT_EQ(next.value_offset, 2 * 4 * 300 * 64);
  EXPECT_EQ(next.rows, 201);
  expect_every_item(batch.p, 300);
}

TEST(SdpaPrefetchTest, StartPositionsWithoutInputPos) {
  // Upstream's llama:: operators: rows at start_pos + i, causal or not.
  Problem causal(1, 4, 2, 64, 8, {0, 0, 0}, 1);
  causal.p.input_pos = nullptr;
  causal.p.start_pos = 20;
  causal.p.causal = true;
  EXPECT_EQ(sdpa_prefetch_of(causal.p, 0).rows, 23);
  expect_every_item(causal.p, 64);
  causal.p.causal = false;
  causal.p.start_pos = 61;  // Every row sees up to position 63.
  EXPECT_EQ(sdpa_prefetch_of(causal.p, 0).rows, 64);
  expect_every_item(causal.p, 64);
}

TEST(SdpaPrefetchTest, AnEmptyPlanPrefetchesNothing) {
  Problem empty(0, 4, 2, 64, 8, {3}, 1);
  EXPECT_EQ(sdpa_work_items(empty.p), 0u);
  EXPECT_EQ(sdpa_prefetch_of(empty.p, 0).rows, 0);
}

}  // namespace
}  // namespace torchlight::llm
