// PackedWeightsCache: the packed weights of every XNNPACK runtime one
// XnnpackBackend creates, shared across delegates, so methods (and
// programs) holding the same weights pack them once and keep one copy.
//
// XNNPACK asks a weights cache provider for packed weights by (packing
// seed, pointer to the unpacked filter, pointer to the bias). Pointers differ
// between payloads, so while a runtime is created the cache knows that
// runtime's constants and keys entries by their contents instead: a keyed
// SipHash (secret per-process key, so a crafted payload cannot aim a
// collision at another's weights) plus the byte count. Entries live until no
// runtime made with the cache remains.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace xnnpack {

/// One constant of the payload a runtime is being created from.
struct ConstantRegion {
  const void* data;
  size_t size;
  /// Keyed hash of what else goes into its packed form: datatype, dims and
  /// quantization parameters (per-channel scales are packed with weights).
  uint64_t salt;
  uint64_t fingerprint = 0;  // Filled on first use.
  bool fingerprinted = false;
};

class PackedWeightsCache {
 public:
  PackedWeightsCache();
  ~PackedWeightsCache();
  PackedWeightsCache(const PackedWeightsCache&) = delete;
  PackedWeightsCache& operator=(const PackedWeightsCache&) = delete;

  /// The provider to give xnn_create_runtime_v3 between begin_runtime and
  /// end_runtime. Valid while this object lives.
  xnn_weights_cache_t provider() { return &provider_; }

  /// Starts creating one runtime whose payload holds `constants` (borrowed
  /// until end_runtime; sorted here by address). Serialises creations:
  /// blocks while another thread is between begin_runtime and end_runtime.
  void begin_runtime(Span<ConstantRegion> constants);
  /// Ends it; `created` says whether XNNPACK made the runtime, which then
  /// holds a reference until release_runtime().
  void end_runtime(bool created);
  /// A runtime made with this cache was deleted; the last one frees every
  /// entry.
  void release_runtime();

  /// The secret SipHash key, for salts (ConstantRegion::salt).
  const uint64_t* hash_key() const { return key_; }

  /// Whether runtimes made with this cache are still alive.
  bool in_use() const;

  /// For tests: weights XNNPACK packed and stored, look-ups answered from
  /// the cache, and bytes held.
  size_t entries() const;
  size_t hits() const;
  size_t bytes() const;

 private:
  struct Entry;
  // xnn_weights_cache_provider callbacks; `context` is the cache.
  static size_t look_up(void* context, const xnn_weights_cache_look_up_key* key);
  static void* reserve_space(void* context, size_t n);
  static size_t look_up_or_insert(void* context, const xnn_weights_cache_look_up_key* key,
                                  void* ptr, size_t size);
  static bool is_finalized(void* context);
  static void* offset_to_addr(void* context, size_t offset);
  static xnn_status delete_cache(void* context);

  // Content fingerprint of the constant starting at `data`; false when
  // `data` is not one of the current runtime's constants.
  bool fingerprint(const void* data, uint64_t* out);
  Entry* find(uint32_t seed, uint64_t kernel, uint64_t bias) const;
  void free_entries();

  xnn_weights_cache_provider provider_;
  uint64_t key_[2];  // SipHash key, random per cache.
  mutable std::mutex mutex_;  // Held from begin_runtime to end_runtime.
  Span<ConstantRegion> constants_;
  void* pending_ = nullptr;  // reserve_space's buffer, until inserted.
  size_t pending_size_ = 0;
  Entry* entries_ = nullptr;  // Singly linked, newest first.
  size_t num_entries_ = 0;
  size_t hits_ = 0;
  size_t bytes_ = 0;
  size_t live_runtimes_ = 0;
};

/// SipHash-2-4 of `size` bytes at `data` under the 128-bit `key`.
uint64_t siphash24(const void* data, size_t size, const uint64_t key[2]);

}  // namespace xnnpack
}  // namespace torchlight
