// Which build of the pointwise loops (pointwise_loops.h) this CPU runs.
#include "kernels/llm/pointwise_loops.h"

namespace torchlight::llm {
namespace {

constexpr size_t kMaxVariants = 3;

struct VariantTable {
  PointwiseVariant items[kMaxVariants];
  size_t count = 0;

  void add(const PointwiseVariant& v) { items[count++] = v; }
};

VariantTable detect_variants() {
  VariantTable table;
#if defined(__x86_64__)
  __builtin_cpu_init();
  // libgcc's checks include the OS saving the wider registers (XGETBV).
  const bool fma = __builtin_cpu_supports("fma");
  if (fma && __builtin_cpu_supports("avx512f")) {
    table.add(PointwiseVariant{"avx512", &silu_avx512, &rms_norm_avx512, &silu_mul_avx512,
                               &add_rms_norm_avx512});
  }
  if (fma && __builtin_cpu_supports("avx2")) {
    table.add(PointwiseVariant{"avx2", &silu_avx2, &rms_norm_avx2, &silu_mul_avx2,
                               &add_rms_norm_avx2});
  }
#endif
  table.add(PointwiseVariant{"generic", &silu_generic, &rms_norm_generic, &silu_mul_generic,
                             &add_rms_norm_generic});
  return table;
}

const VariantTable& variants() {
  static const VariantTable table = detect_variants();  // Thread-safe, once.
  return table;
}

}  // namespace

const PointwiseVariant* pointwise_variants(size_t* count) {
  *count = variants().count;
  return variants().items;
}

const PointwiseVariant& best_pointwise_variant() { return variants().items[0]; }

}  // namespace torchlight::llm
