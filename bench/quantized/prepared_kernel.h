// Shared by the quantized benches: seeded random values and one prepared
// kernel call, as a loaded method runs it (prepare once, then eval).
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/all_kernels.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::bench {

using portable::kernel_test::KernelArgs;

inline std::vector<double> random_values(size_t n, uint64_t seed, double low, double high) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  std::vector<double> out(n);
  for (double& v : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    v = low + (high - low) * (static_cast<double>(x >> 11) / 9007199254740992.0);
  }
  return out;
}

inline std::vector<double> random_ints(size_t n, uint64_t seed, int low, int high) {
  std::vector<double> v = random_values(n, seed, low, high);
  for (double& d : v) d = static_cast<double>(static_cast<int>(d));
  return v;
}

// One prepared call: the kernel resolved from all_kernels(), prepared once,
// with its scratch; run() is one eval. `constants`: the arguments prepare
// sees as program constants (bit k: argument k), as a loaded program's
// weights are.
class PreparedKernel {
 public:
  PreparedKernel(const char* name, KernelArgs& args, uint64_t constants = 0) : args_(args) {
    const KernelRegistry* registry = *all_kernels();
    TensorArgMeta metas[16];
    const size_t n = describe_args(args.span(), metas, 16);
    kernel_ = *registry->resolve(name, {metas, n});
    MemoryAllocator method(method_memory_.data(), method_memory_.size());
    Status s = prepare_kernel_call(*kernel_, args.span(), &method, &call_, constants);
    if (!s.ok()) std::fprintf(stderr, "%s: prepare failed: %s\n", name, s.message());
    scratch_.resize(call_.scratch_bytes + 64);
  }
  bool run() {
    KernelContext ctx(nullptr, nullptr, kernel_->name);
    ctx.set_call(kernel_->name, call_.state);
    // Aligned to 64 as the method's workspace is (the AMX path needs it).
    uint8_t* aligned = scratch_.data() + (64 - reinterpret_cast<uintptr_t>(scratch_.data()) % 64) % 64;
    ctx.set_scratch(aligned, call_.scratch_bytes);
    call_.eval(ctx, args_.span());
    return ctx.status().ok();
  }

 private:
  KernelArgs& args_;
  const Kernel* kernel_ = nullptr;
  PreparedCall call_;
  std::vector<uint8_t> method_memory_ = std::vector<uint8_t>(1 << 20);
  std::vector<uint8_t> scratch_;
};

}  // namespace torchlight::bench
