// torchlight::sdpa_with_kv_cache.out: checks every precondition of the
// contract (python/torchlight/llm/custom_ops.py) before touching memory,
// writes the new key/value rows into the caches, then runs the attention
// loops (sdpa_attend_impl.h) on the thread pool.
//
// The caches are float32, or both float16 (an exporter option that halves
// the bytes attention reads per token: rows are written rounded to nearest
// even and read back widened to float32; everything else stays float32).
//
// The prepare step checks, once at load, what cannot change between runs:
// the dtypes and ranks of every tensor and the dim order of out; it picks
// the build of the attention loops this CPU runs best and keeps it as the
// instruction's state. The eval checks what depends on run-time shapes and
// on input_pos's values.
//
// Scratch: none, neither method scratch nor the temp allocator. The loops
// use an online softmax over fixed tiles of keys, so each work item needs
// only fixed stack arrays (128 scores; prefill also a 32 KiB tile a float16
// cache's rows are widened into) whatever the cache length.
#include <initializer_list>

#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/sdpa_args.h"
#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

using Args = SdpaArgs;

Args args_of(Span<EValue*> args) { return sdpa_args_of(args, 7); }

// The rest of the contract, on every run before anything is written (sizes
// may change between runs). On success the input_pos values are known to
// lie in [0, S).
Status check_shapes(const Args& a) {
  TL_RETURN_IF_ERROR(sdpa_check_shapes(a, SdpaLayout::kHeadsFirst));
  return sdpa_check_data_and_positions(a);
}

// The contract's step 1, from [B, Hkv, T, D] key and value tensors.
void write_cache_rows(const Args& a, SdpaNarrowFn narrow) {
  const Tensor& key = a.key.tensor;
  const Tensor& value = a.value.tensor;
  const SdpaRows key_rows{key.const_data_ptr<float>(),
                          {key.strides()[0], key.strides()[1], key.strides()[2]}};
  const SdpaRows value_rows{value.const_data_ptr<float>(),
                            {value.strides()[0], value.strides()[1], value.strides()[2]}};
  sdpa_write_cache_rows(key_rows, value_rows, key.size(0), key.size(1), key.size(2), key.size(3),
                        a.key_cache.tensor, a.value_cache.tensor, a.input_pos.tensor, narrow);
}

}  // namespace

Status sdpa_with_kv_cache_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  // The checks that do not depend on run-time shapes or values, once at load.
  TL_RETURN_IF_ERROR(sdpa_check_static(args_of(args), "[B, Hq, T, D]", "[B, Hkv, T, D]"));
  call->state = &sdpa_variants()[0];  // The fastest build this CPU runs.
  return Error::kOk;
}

void sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 8, *args[7]);
  const Args a = args_of(args);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_shapes(a));
  const float scale = sdpa_scale_of(*args[6], a.query.tensor.size(3));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(a.out, a.query.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(a.out));

  const SdpaVariant* variant = ctx.state<SdpaVariant>();
  if (variant == nullptr) variant = &sdpa_variants()[0];  // Called without prepare.
  write_cache_rows(a, variant->narrow);
  if (a.out.tensor.numel() == 0) return;

  SdpaProblem p = sdpa_problem_bhsd(a.query.tensor, a.key_cache.tensor, a.value_cache.tensor,
                                    a.input_pos.tensor, a.out.tensor, scale);
  sdpa_run(p, variant);
}

}  // namespace torchlight::llm
