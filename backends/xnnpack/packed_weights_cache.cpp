#include "backends/xnnpack/packed_weights_cache.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace torchlight {
namespace xnnpack {
namespace {

// XNNPACK's packed weights are read with aligned vector loads.
constexpr size_t kAlignment = 64;
// Reported to XNNPACK when a look-up misses or an insert fails.
constexpr size_t kMiss = SIZE_MAX;

uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

void sip_round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
  v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
  v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
  v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
  v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void* aligned_bytes(size_t n) {
  return std::aligned_alloc(kAlignment, (n + kAlignment - 1) / kAlignment * kAlignment);
}

}  // namespace

uint64_t siphash24(const void* data, size_t size, const uint64_t key[2]) {
  uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
  uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
  const auto* p = static_cast<const uint8_t*>(data);
  const size_t whole = size / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    const uint64_t m = load_le64(p + i);
    v3 ^= m;
    sip_round(v0, v1, v2, v3);
    sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  uint64_t last = static_cast<uint64_t>(size) << 56;
  for (size_t i = whole; i < size; ++i) last |= static_cast<uint64_t>(p[i]) << (8 * (i - whole));
  v3 ^= last;
  sip_round(v0, v1, v2, v3);
  sip_round(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) sip_round(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

struct PackedWeightsCache::Entry {
  uint32_t seed;
  uint64_t kernel;  // Fingerprints of the unpacked filter and bias (0: none).
  uint64_t bias;
  bool keyed;       // False when the filter was not a known constant.
  void* data;
  size_t size;
  Entry* next;
};

PackedWeightsCache::PackedWeightsCache() {
  provider_.context = this;
  provider_.look_up = &PackedWeightsCache::look_up;
  provider_.reserve_space = &PackedWeightsCache::reserve_space;
  provider_.look_up_or_insert = &PackedWeightsCache::look_up_or_insert;
  provider_.is_finalized = &PackedWeightsCache::is_finalized;
  provider_.offset_to_addr = &PackedWeightsCache::offset_to_addr;
  provider_.delete_cache = &PackedWeightsCache::delete_cache;
  if (getrandom(key_, sizeof(key_), 0) != static_cast<ssize_t>(sizeof(key_))) {
    // No entropy source: fall back to addresses, still unknown to a payload.
    key_[0] = reinterpret_cast<uintptr_t>(this) * 0x9e3779b97f4a7c15ull;
    key_[1] = reinterpret_cast<uintptr_t>(&key_) ^ 0xc2b2ae3d27d4eb4full;
  }
}

PackedWeightsCache::~PackedWeightsCache() {
  std::free(pending_);
  free_entries();
}

void PackedWeightsCache::free_entries() {
  while (entries_ != nullptr) {
    Entry* next = entries_->next;
    std::free(entries_->data);
    delete entries_;
    entries_ = next;
  }
  num_entries_ = 0;
  bytes_ = 0;
}

void PackedWeightsCache::begin_runtime(Span<ConstantRegion> constants) {
  mutex_.lock();
  std::sort(constants.begin(), constants.end(),
            [](const ConstantRegion& a, const ConstantRegion& b) { return a.data < b.data; });
  constants_ = constants;
}

void PackedWeightsCache::end_runtime(bool created) {
  std::free(pending_);
  pending_ = nullptr;
  pending_size_ = 0;
  constants_ = {};
  if (created) ++live_runtimes_;
  mutex_.unlock();
}

void PackedWeightsCache::release_runtime() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_runtimes_ > 0 && --live_runtimes_ == 0) free_entries();
}

bool PackedWeightsCache::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_runtimes_ != 0;
}

size_t PackedWeightsCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return num_entries_;
}

size_t PackedWeightsCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

size_t PackedWeightsCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

bool PackedWeightsCache::fingerprint(const void* data, uint64_t* out) {
  auto it = std::lower_bound(
      constants_.begin(), constants_.end(), data,
      [](const ConstantRegion& r, const void* p) { return r.data < p; });
  if (it == constants_.end() || it->data != data) return false;
  if (!it->fingerprinted) {
    // The size goes in too: a prefix of other weights is other weights.
    it->fingerprint = siphash24(it->data, it->size, key_) ^ rotl(it->salt, 29) ^
                      (it->size * 0x9e3779b97f4a7c15ull);
    it->fingerprinted = true;
  }
  *out = it->fingerprint;
  return true;
}

PackedWeightsCache::Entry* PackedWeightsCache::find(uint32_t seed, uint64_t kernel,
                                                    uint64_t bias) const {
  for (Entry* e = entries_; e != nullptr; e = e->next) {
    if (e->keyed && e->seed == seed && e->kernel == kernel && e->bias == bias) return e;
  }
  return nullptr;
}

// The callbacks run only inside xnn_create_runtime_v3, on the thread that
// holds mutex_ (begin_runtime); offset_to_addr and is_finalized also run at
// reshape/setup on any thread and touch no state.
size_t PackedWeightsCache::look_up(void* context, const xnn_weights_cache_look_up_key* key) {
  auto* self = static_cast<PackedWeightsCache*>(context);
  uint64_t kernel = 0, bias = 0;
  if (key == nullptr || !self->fingerprint(key->kernel, &kernel)) return kMiss;
  if (key->bias != nullptr && !self->fingerprint(key->bias, &bias)) return kMiss;
  Entry* e = self->find(key->seed, kernel, bias);
  if (e == nullptr) return kMiss;
  ++self->hits_;
  return reinterpret_cast<size_t>(e->data);
}

void* PackedWeightsCache::reserve_space(void* context, size_t n) {
  auto* self = static_cast<PackedWeightsCache*>(context);
  if (self->pending_ != nullptr && self->pending_size_ >= n) return self->pending_;
  std::free(self->pending_);
  self->pending_ = aligned_bytes(n);
  self->pending_size_ = self->pending_ == nullptr ? 0 : n;
  return self->pending_;
}

size_t PackedWeightsCache::look_up_or_insert(void* context, const xnn_weights_cache_look_up_key* key,
                                             void* ptr, size_t size) {
  auto* self = static_cast<PackedWeightsCache*>(context);
  uint64_t kernel = 0, bias = 0;
  bool keyed = key != nullptr && self->fingerprint(key->kernel, &kernel) &&
               (key->bias == nullptr || self->fingerprint(key->bias, &bias));
  if (keyed) {
    Entry* e = self->find(key->seed, kernel, bias);
    if (e != nullptr) {
      ++self->hits_;
      return reinterpret_cast<size_t>(e->data);
    }
  }
  auto* entry = new (std::nothrow) Entry();
  if (entry == nullptr) return kMiss;
  void* data = ptr;
  if (ptr == self->pending_ && size <= self->pending_size_) {
    self->pending_ = nullptr;  // The entry owns it now.
    self->pending_size_ = 0;
  } else {
    data = aligned_bytes(size);
    if (data == nullptr) {
      delete entry;
      return kMiss;
    }
    std::memcpy(data, ptr, size);
  }
  *entry = {keyed ? key->seed : 0, kernel, bias, keyed, data, size, self->entries_};
  self->entries_ = entry;
  ++self->num_entries_;
  self->bytes_ += size;
  return reinterpret_cast<size_t>(data);
}

bool PackedWeightsCache::is_finalized(void* /*context*/) {
  // Entries never move (each has its own allocation and "offsets" are
  // addresses), so the cache is always usable as it stands.
  return true;
}

void* PackedWeightsCache::offset_to_addr(void* /*context*/, size_t offset) {
  return reinterpret_cast<void*>(offset);
}

xnn_status PackedWeightsCache::delete_cache(void* /*context*/) {
  // The backend owns the cache; XNNPACK never deletes it.
  return xnn_status_success;
}

}  // namespace xnnpack
}  // namespace torchlight
