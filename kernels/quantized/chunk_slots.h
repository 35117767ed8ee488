// Per-thread slots of scratch for one job's chunks: the first chunk a
// thread runs claims a slot (and sets it up, e.g. lays out weights there);
// its later chunks find the same slot again. For jobs on threadpool's
// parallel_for, which does not say which thread runs a chunk: a thread is
// told apart by pthread_self(), and only ever finds its own slot.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace torchlight::quantized {

class ChunkSlots {
 public:
  /// The most slots any job has.
  static constexpr int64_t kMaxSlots = 16;

  /// A job's slots: at most `slots` (and kMaxSlots) threads get one.
  explicit ChunkSlots(int64_t slots) : slots_(std::min(slots, kMaxSlots)) {}

  /// The calling thread's slot, *fresh when claimed by this call; -1 when
  /// every slot belongs to other threads.
  int64_t mine(bool* fresh) {
    const pthread_t me = pthread_self();
    const int64_t used = std::min(claimed_.load(std::memory_order_acquire), slots_);
    for (int64_t i = 0; i < used; ++i) {
      if (ready_[i].load(std::memory_order_acquire) && pthread_equal(owner_[i], me)) {
        *fresh = false;
        return i;
      }
    }
    const int64_t slot = claimed_.fetch_add(1, std::memory_order_acq_rel);
    if (slot >= slots_) return -1;
    owner_[slot] = me;
    ready_[slot].store(true, std::memory_order_release);
    *fresh = true;
    return slot;
  }

 private:
  const int64_t slots_;
  std::atomic<int64_t> claimed_{0};
  std::atomic<bool> ready_[kMaxSlots] = {};
  pthread_t owner_[kMaxSlots] = {};
};

}  // namespace torchlight::quantized
