// Test helper: builds XNNPACK delegate payloads (header, flatbuffer,
// constants) with the flatbuffers object API, and runs them through
// XnnpackBackend without a program file.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/xnnpack/xnnpack_backend.h"
#include "extension/memory/malloc_allocator.h"
#include "extension/tensor/owned_tensor.h"
#include "runtime/core/event_tracer.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace testing {

namespace fb = ::fb_xnnpack;
inline constexpr uint32_t kNone = 0xFFFFFFFFu;

class PayloadBuilder {
 public:
  PayloadBuilder();

  /// A value; returns its id. `constant` is a constant_data index (0: none).
  uint32_t value(fb::XNNDatatype type, std::vector<uint32_t> dims, uint32_t flags = 0,
                 uint32_t external_id = kNone, uint32_t constant = 0);
  uint32_t input(std::vector<uint32_t> dims, uint32_t external_id,
                 fb::XNNDatatype type = fb::XNNDatatype::xnn_datatype_fp32);
  uint32_t output(std::vector<uint32_t> dims, uint32_t external_id,
                  fb::XNNDatatype type = fb::XNNDatatype::xnn_datatype_fp32);
  uint32_t internal(std::vector<uint32_t> dims,
                    fb::XNNDatatype type = fb::XNNDatatype::xnn_datatype_fp32);
  uint32_t constant_f32(std::vector<uint32_t> dims, const std::vector<float>& values);
  /// A quantized value with `quant` as its parameters (the last value added
  /// becomes quantized). Returns its id.
  uint32_t quantized(fb::XNNDatatype type, std::vector<uint32_t> dims, fb::XNNQuantParamsUnion quant,
                     uint32_t flags = 0, uint32_t external_id = kNone, uint32_t constant = 0);

  /// Appends bytes to the constant region; returns the constant_data index.
  uint32_t constant_bytes(const void* data, size_t size);
  /// A constant kept in the program's named data under `key` (upstream
  /// main's format: offset UINT64_MAX, the bytes in `named_data`); returns
  /// the constant_data index. Without data, only the entry naming `key`.
  uint32_t named_constant(const std::string& key, const void* data = nullptr, size_t size = 0);

  /// Adds a node of `kind` whose parameters table is `table` (owned).
  template <typename T>
  T* node(fb::XNodeUnion kind) {
    T* table = new T();
    add_node(kind, table);
    return table;
  }
  /// Gives the last node an output_min_max table.
  void clamp_last(float min, float max);

  /// The payload: XH00 header, flatbuffer (identifier XN01), constants.
  std::vector<uint8_t> build() const;
  /// A legacy payload: the bare flatbuffer, constants in constant_buffer.
  std::vector<uint8_t> build_legacy() const;
  /// The bare flatbuffer bytes (identifier XN01).
  std::vector<uint8_t> flatbuffer() const;

  fb::XNNGraphT graph;
  std::map<std::string, std::vector<uint8_t>> named_data;

 private:
  void add_node(fb::XNodeUnion kind, void* table);
  std::vector<uint8_t> constants_;
  std::vector<std::vector<uint8_t>> blobs_;  // Per constant index, for legacy.
};

/// Quantization parameters: per tensor; per channel (dim 0) with the scales
/// inline, or in constant_data[scale_index] as upstream main writes them;
/// per token (dynamic, one non-batch dim).
fb::XNNQuantParamsUnion per_tensor(float scale, int32_t zero_point);
fb::XNNQuantParamsUnion per_channel(std::vector<float> scales);
fb::XNNQuantParamsUnion per_channel_in_constant(uint32_t scale_index, uint32_t count);
fb::XNNQuantParamsUnion per_token();

/// Named data held in memory (a program's `named_data` stand-in), counting
/// the loads.
class NamedDataInMemory : public NamedDataMap {
 public:
  explicit NamedDataInMemory(std::map<std::string, std::vector<uint8_t>> blobs)
      : blobs_(std::move(blobs)) {}
  Result<TensorLayout> get_tensor_layout(std::string_view key) const override;
  Result<FreeableBuffer> get_data(std::string_view key) const override;
  Status load_data_into(std::string_view key, void* buffer, size_t size) const override;
  Result<uint32_t> get_num_keys() const override { return uint32_t(blobs_.size()); }
  Result<const char*> get_key(uint32_t index) const override;
  /// get_data calls, and buffers not freed yet.
  mutable int loads = 0;
  mutable int live = 0;

 private:
  std::map<std::string, std::vector<uint8_t>> blobs_;
};

/// One initialised delegate plus the memory it lives in.
class LoadedDelegate {
 public:
  /// Initialises from `payload` with `backend` (both borrowed; they must
  /// outlive this object).
  explicit LoadedDelegate(const std::vector<uint8_t>& payload,
                          const XnnpackBackend& backend = xnnpack_backend(),
                          EventTracer* tracer = nullptr,
                          const NamedDataMap* named_data = nullptr);
  ~LoadedDelegate();
  const Status& status() const { return status_; }
  Status execute(std::vector<EValue> args);

 private:
  MallocAllocator allocator_;
  const XnnpackBackend& backend_;
  EventTracer* tracer_;  // Given to init and every execute; may be null.
  DelegateHandle* handle_ = nullptr;
  Status status_;
};

/// Records the names of the delegate's profiling events (XNNPACK's
/// operators and the stages run on Torchlight's kernels).
class DelegateEventNames : public EventTracer {
 public:
  void log_profiling_delegate(const char* name, int32_t, uint64_t, uint64_t, const void*,
                              size_t) override {
    names.emplace_back(name);
  }
  size_t count_containing(const std::string& part) const {
    size_t n = 0;
    for (const std::string& name : names) n += name.find(part) != std::string::npos;
    return n;
  }
  std::vector<std::string> names;
};

/// An fp32 tensor with `values` (or zeros).
OwnedTensor float_tensor(std::vector<SizesType> sizes, std::vector<float> values = {});
std::vector<float> values_of(const OwnedTensor& t);
/// Deterministic pseudo-random values in [-1, 1).
std::vector<float> random_values(size_t n, uint32_t seed);

/// TORCHLIGHT_XNNPACK_CONV=xnnpack while alive: delegates loaded then keep
/// every convolution (and fused block) on XNNPACK.
class XnnpackOnly {
 public:
  XnnpackOnly() { setenv("TORCHLIGHT_XNNPACK_CONV", "xnnpack", 1); }
  ~XnnpackOnly() { unsetenv("TORCHLIGHT_XNNPACK_CONV"); }
};

struct Conv {
  uint32_t ic, oc, k, stride = 1, pad = 0, dilation = 1;
  bool relu = false;
};

/// A float conv node from `in` to `out` with seeded constant filter and bias.
void add_conv(PayloadBuilder& b, const Conv& c, uint32_t in, uint32_t out, uint32_t seed);
/// ReLU6 after the last node: as its output range, or (`clamp_node`) as an
/// XNNClamp node from `*value` to a new internal value of `dims`, which
/// `*value` then names.
void add_relu6(PayloadBuilder& b, bool clamp_node, uint32_t* value, std::vector<uint32_t> dims);
/// A two-input node of `kind`; returns `out`.
uint32_t add_binary(PayloadBuilder& b, fb::XNodeUnion kind, uint32_t a, uint32_t c, uint32_t out);

/// One execute's status, output values and output shapes.
struct Outputs {
  Status status;
  std::vector<std::vector<float>> values;
  std::vector<std::vector<SizesType>> shapes;
};

/// Loads `payload` (split, or on XNNPACK alone) and runs it once per input
/// set; outputs are dynamic-bound fp32 tensors of `out_bounds`.
std::vector<Outputs> run_all(const std::vector<uint8_t>& payload,
                             const std::vector<std::vector<OwnedTensor*>>& input_sets,
                             const std::vector<std::vector<SizesType>>& out_bounds,
                             bool xnnpack_only, DelegateEventNames* events = nullptr);

/// Same statuses and shapes, values within 1e-5 of `alone`'s largest
/// magnitude (two summation orders), which must not be all zeros.
void expect_same_outputs(const std::vector<Outputs>& split, const std::vector<Outputs>& alone);

}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
