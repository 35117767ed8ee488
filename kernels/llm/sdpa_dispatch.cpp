#include "kernels/llm/sdpa_dispatch.h"

#include <algorithm>

#include "extension/threadpool/threadpool.h"

namespace torchlight::llm {
namespace {

constexpr size_t kMaxVariants = 3;

struct VariantTable {
  SdpaVariant items[kMaxVariants];
  size_t count = 0;

  void add(const char* name, SdpaAttendFn attend, SdpaNarrowFn narrow) {
    items[count++] = SdpaVariant{name, attend, narrow};
  }
};

VariantTable detect_variants() {
  VariantTable table;
#if defined(__x86_64__)
  __builtin_cpu_init();
  // libgcc's checks include the OS saving the wider registers (XGETBV).
  // F16C: the float16 cache conversions (every AVX2 CPU has it).
  const bool fma = __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (fma && __builtin_cpu_supports("avx512f")) {
    table.add("avx512", &sdpa_attend_avx512, &sdpa_narrow_avx512);
  }
  if (fma && __builtin_cpu_supports("avx2")) {
    table.add("avx2", &sdpa_attend_avx2, &sdpa_narrow_avx2);
  }
#endif
  table.add("generic", &sdpa_attend_generic, &sdpa_narrow_generic);
  return table;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Below about this many multiply-adds, waking the pool costs more than it saves.
constexpr double kMinParallelWork = 32768;

// Row i (a position row) attends to cache positions below this.
int64_t row_limit(const SdpaProblem& p, int64_t i) {
  return p.input_pos != nullptr ? p.input_pos[i * p.input_pos_stride] + 1
         : p.causal           ? p.start_pos + i + 1
                              : p.start_pos + p.rows;
}

}  // namespace

SdpaPrefetch sdpa_prefetch_of(const SdpaProblem& p, size_t item) {
  const size_t next = item + 1;
  if (next >= sdpa_work_items(p)) return kNoSdpaPrefetch;
  const int64_t group = static_cast<int64_t>(item) / p.blocks_per_group;
  const int64_t next_group = static_cast<int64_t>(next) / p.blocks_per_group;
  if (next_group == group) return kNoSdpaPrefetch;  // The same head: already being read.
  const int64_t n_rep = p.q_heads / p.kv_heads;
  const int64_t row_begin = (static_cast<int64_t>(next) % p.blocks_per_group) * p.rows_per_block;
  const int64_t row_end = std::min(row_begin + p.rows_per_block, n_rep * p.rows);
  int64_t rows = 0;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t limit = row_limit(p, r / n_rep);
    if (limit > rows) rows = limit;
  }
  const int64_t b = next_group / p.kv_heads;
  const int64_t g = next_group % p.kv_heads;
  return SdpaPrefetch{b * p.key_cache_strides[0] + g * p.key_cache_strides[1],
                      b * p.value_cache_strides[0] + g * p.value_cache_strides[1], rows};
}

SdpaProblem sdpa_problem_bhsd(const Tensor& query, const Tensor& key_cache,
                              const Tensor& value_cache, const Tensor& input_pos,
                              const Tensor& out, float scale) {
  SdpaProblem p{};
  p.query = query.const_data_ptr<float>();
  if (key_cache.scalar_type() == ScalarType::kHalf) {
    p.key_cache_half = static_cast<const uint16_t*>(key_cache.const_data_ptr());
    p.value_cache_half = static_cast<const uint16_t*>(value_cache.const_data_ptr());
  } else {
    p.key_cache = key_cache.const_data_ptr<float>();
    p.value_cache = value_cache.const_data_ptr<float>();
  }
  p.input_pos = input_pos.const_data_ptr<int64_t>();
  p.out = out.mutable_data_ptr<float>();
  p.batch = query.size(0);
  p.q_heads = query.size(1);
  p.kv_heads = key_cache.size(1);
  p.rows = query.size(2);
  p.head_dim = query.size(3);
  p.input_pos_stride = input_pos.strides()[0];
  for (size_t d = 0; d < 3; ++d) {
    p.query_strides[d] = query.strides()[d];
    p.key_cache_strides[d] = key_cache.strides()[d];
    p.value_cache_strides[d] = value_cache.strides()[d];
    p.out_strides[d] = out.strides()[d];
  }
  p.scale = scale;
  return p;
}

Span<const SdpaVariant> sdpa_variants() {
  static const VariantTable table = detect_variants();  // Thread-safe, once.
  return Span<const SdpaVariant>(table.items, table.count);
}

void sdpa_plan_work(SdpaProblem& p, size_t threads) {
  const int64_t group_rows = (p.q_heads / p.kv_heads) * p.rows;
  const int64_t groups = p.batch * p.kv_heads;
  if (group_rows == 0 || groups == 0) {
    p.rows_per_block = 1;
    p.blocks_per_group = 0;
    return;
  }
  const int64_t block_rows =
      group_rows >= kSdpaMinPrefillRows ? kSdpaPrefillRows : kSdpaMaxRowsPerBlock;
  int64_t blocks = ceil_div(group_rows, block_rows);
  const int64_t wanted = ceil_div(static_cast<int64_t>(threads), groups);
  if (blocks < wanted) blocks = wanted < group_rows ? wanted : group_rows;
  // Even blocks: 12 rows make 6 + 6, not 8 + 4.
  p.rows_per_block = ceil_div(group_rows, blocks);
  p.blocks_per_group = ceil_div(group_rows, p.rows_per_block);
}

size_t sdpa_work_items(const SdpaProblem& p) {
  return static_cast<size_t>(p.batch * p.kv_heads * p.blocks_per_group);
}

void sdpa_run(SdpaProblem& p, const SdpaVariant* variant) {
  if (variant == nullptr) variant = &sdpa_variants()[0];
  sdpa_plan_work(p, threadpool::num_threads());
  const size_t items = sdpa_work_items(p);
  // Work estimate: every row against (at most) the longest valid prefix,
  // twice (scores, then values)
  int64_t max_limit = 0;
  for (int64_t i = 0; i < p.rows; ++i) {
    const int64_t limit = row_limit(p, i);
    if (limit > max_limit) max_limit = limit;
  }
  // (in double: the product of five sizes may overflow int64).
  const double work = 2.0 * static_cast<double>(p.batch * p.q_heads * p.rows) *
                      static_cast<double>(max_limit) * static_cast<double>(p.head_dim);
  const size_t min_chunk = work < kMinParallelWork ? items : 1;
  const SdpaAttendFn attend = variant->attend;
  threadpool::parallel_for(items, min_chunk,
                           [&p, attend](size_t begin, size_t end) { attend(p, begin, end); });
}

}  // namespace torchlight::llm
