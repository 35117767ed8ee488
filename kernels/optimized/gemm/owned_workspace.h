// A heap-owned GemmWorkspace for tests and benchmarks, which call gemm()
// outside a method (kernels take theirs from the method's scratch).
#pragma once

#include <cstdlib>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"

namespace torchlight::optimized {

class OwnedGemmWorkspace {
 public:
  /// Room for `threads` packing tasks at once (default: the pool's threads).
  explicit OwnedGemmWorkspace(size_t threads = threadpool::num_threads()) {
    constexpr size_t kAlign = 64;
    const size_t bytes = (gemm_workspace_bytes(threads) + kAlign - 1) / kAlign * kAlign;
    memory_ = std::aligned_alloc(kAlign, bytes);
    workspace_ = make_gemm_workspace(memory_, memory_ == nullptr ? 0 : bytes);
  }
  ~OwnedGemmWorkspace() { std::free(memory_); }
  OwnedGemmWorkspace(const OwnedGemmWorkspace&) = delete;
  OwnedGemmWorkspace& operator=(const OwnedGemmWorkspace&) = delete;

  const GemmWorkspace& get() const { return workspace_; }

 private:
  void* memory_ = nullptr;
  GemmWorkspace workspace_;
};

}  // namespace torchlight::optimized
