// Test helpers for kernels: tensors over owned storage, built from and read
// back as doubles in logical (row-major) order, and kernel calls checked
// against the generated schemas as the runtime checks them.
// Conversions here are written independently of util/convert.h so tests do
// not check the kernels against themselves.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/half.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "kernels/schemas/op_schemas.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight::portable::kernel_test {

/// Stores `value` as one element of `type` (integers via int64, wrapping).
inline void store_double(ScalarType type, void* p, double value) {
  auto put = [p](auto v) { std::memcpy(p, &v, sizeof(v)); };
  const int64_t i = static_cast<int64_t>(value);
  switch (type) {
    case ScalarType::kByte: put(static_cast<uint8_t>(i)); break;
    case ScalarType::kChar: put(static_cast<int8_t>(i)); break;
    case ScalarType::kShort: put(static_cast<int16_t>(i)); break;
    case ScalarType::kInt: put(static_cast<int32_t>(i)); break;
    case ScalarType::kLong: put(i); break;
    case ScalarType::kHalf: put(Half(static_cast<float>(value)).bits); break;
    case ScalarType::kBFloat16: put(BFloat16(static_cast<float>(value)).bits); break;
    case ScalarType::kFloat: put(static_cast<float>(value)); break;
    case ScalarType::kDouble: put(value); break;
    case ScalarType::kBool: put(static_cast<uint8_t>(value != 0 ? 1 : 0)); break;
    default: break;  // Other dtypes: left zero.
  }
}

/// Reads one element of `type` as double.
inline double load_double(ScalarType type, const void* p) {
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (type) {
    case ScalarType::kByte: return get(uint8_t{});
    case ScalarType::kChar: return get(int8_t{});
    case ScalarType::kShort: return get(int16_t{});
    case ScalarType::kInt: return get(int32_t{});
    case ScalarType::kLong: return static_cast<double>(get(int64_t{}));
    case ScalarType::kHalf: return Half::to_float(get(uint16_t{}));
    case ScalarType::kBFloat16: return BFloat16::to_float(get(uint16_t{}));
    case ScalarType::kFloat: return get(float{});
    case ScalarType::kDouble: return get(double{});
    case ScalarType::kBool: return get(uint8_t{}) != 0 ? 1.0 : 0.0;
    default: return 0;
  }
}

/// `count` pseudo-random values in [-1, 1), each exactly a float32, so a
/// float32 tensor holds them unrounded and a double reference sees the same
/// inputs.
inline std::vector<double> random_float_values(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<float>(dist(rng));
  return v;
}

/// Layout options for TestTensor.
struct Layout {
  std::vector<DimOrderType> dim_order;  // Empty: contiguous (0, 1, ..., n-1).
  std::vector<StridesType> strides;     // Empty: from dim_order. Else explicit.
  TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic;
};

inline Layout dim_order(std::vector<DimOrderType> order) { return Layout{std::move(order), {}, {}}; }
inline Layout strides(std::vector<StridesType> s) { return Layout{{}, std::move(s), {}}; }
inline Layout dynamic_bound() { return Layout{{}, {}, TensorShapeDynamism::kDynamicBound}; }

/// A tensor owning its metadata and storage. Not copyable or movable: the
/// TensorImpl points into its members.
class TestTensor {
 public:
  /// `values` (empty: all zero) are in logical row-major order and are
  /// stored through the strides, so a permuted layout holds the same
  /// logical tensor.
  TestTensor(ScalarType dtype, std::vector<SizesType> sizes, std::vector<double> values = {},
             Layout layout = {})
      : sizes_(std::move(sizes)),
        dim_order_(std::move(layout.dim_order)),
        strides_(std::move(layout.strides)),
        impl_(make_impl(dtype, layout.dynamism)) {
    for (size_t i = 0; i < values.size(); ++i) set(static_cast<int64_t>(i), values[i]);
  }
  TestTensor(const TestTensor&) = delete;
  TestTensor& operator=(const TestTensor&) = delete;

  Tensor tensor() { return Tensor(&impl_); }
  EValue evalue() { return EValue(tensor()); }
  TensorImpl& impl() { return impl_; }

  int64_t numel() const { return impl_.numel(); }
  std::vector<SizesType> sizes() const {
    return std::vector<SizesType>(impl_.sizes().begin(), impl_.sizes().end());
  }

  /// Element at logical row-major index `index` of the current sizes.
  double get(int64_t index) const { return load_double(impl_.scalar_type(), address(index)); }
  void set(int64_t index, double value) { store_double(impl_.scalar_type(), address(index), value); }
  /// All elements in logical order.
  std::vector<double> values() const {
    std::vector<double> out;
    for (int64_t i = 0; i < numel(); ++i) out.push_back(get(i));
    return out;
  }
  /// Raw 16-bit pattern of a float16/bfloat16 element.
  uint16_t bits(int64_t index) const {
    uint16_t b;
    std::memcpy(&b, address(index), sizeof(b));
    return b;
  }

 private:
  TensorImpl make_impl(ScalarType dtype, TensorShapeDynamism dynamism) {
    const size_t dim = sizes_.size();
    if (dim_order_.empty()) {
      for (size_t d = 0; d < dim; ++d) dim_order_.push_back(static_cast<DimOrderType>(d));
    }
    if (strides_.empty()) {
      strides_.resize(dim);
      compute_strides({sizes_.data(), dim}, {dim_order_.data(), dim}, strides_.data());
    }
    // Storage for the largest offset, at least one 8-byte word.
    int64_t span = 1;
    for (size_t d = 0; d < dim; ++d) {
      if (sizes_[d] == 0) span = 0;
    }
    if (span != 0) {
      for (size_t d = 0; d < dim; ++d) span += (sizes_[d] - 1) * strides_[d];
    }
    storage_.assign(static_cast<size_t>(span) * element_size(dtype) / 8 + 1, 0);
    return TensorImpl(dtype, dim, sizes_.data(), storage_.data(), dim_order_.data(),
                      strides_.data(), dynamism);
  }

  void* address(int64_t index) const {
    int64_t offset = 0;
    for (size_t d = impl_.dim(); d-- > 0;) {
      const int64_t size = impl_.sizes()[d];
      offset += (index % size) * impl_.strides()[d];
      index /= size;
    }
    return reinterpret_cast<char*>(const_cast<uint64_t*>(storage_.data())) +
           offset * static_cast<int64_t>(element_size(impl_.scalar_type()));
  }

  std::vector<SizesType> sizes_;
  std::vector<DimOrderType> dim_order_;
  std::vector<StridesType> strides_;
  std::vector<uint64_t> storage_;
  TensorImpl impl_;
};

/// A kernel's argument list: owned EValues and the pointers a kernel takes.
class KernelArgs {
 public:
  KernelArgs(std::initializer_list<EValue> values) : values_(values) {
    for (EValue& v : values_) pointers_.push_back(&v);
  }
  explicit KernelArgs(std::vector<EValue> values) : values_(std::move(values)) {
    for (EValue& v : values_) pointers_.push_back(&v);
  }
  KernelArgs(const KernelArgs&) = delete;
  KernelArgs& operator=(const KernelArgs&) = delete;

  Span<EValue*> span() { return {pointers_.data(), pointers_.size()}; }
  EValue& operator[](size_t i) { return values_[i]; }
  /// Points slot `i` at another slot's value, as programs do for out/return.
  void alias(size_t i, size_t target) { pointers_[i] = &values_[target]; }
  void set_null(size_t i) { pointers_[i] = nullptr; }

 private:
  std::vector<EValue> values_;
  std::vector<EValue*> pointers_;
};

/// The kernel tables the test binary links; each test binary defines it
/// (test/kernels_under_test.cpp for the portable tests), so run_kernel()
/// runs a kernel with the prepare step it is registered with.
Span<const Span<const Kernel>> kernel_tables_under_test();

/// Runs `eval` as the runtime runs operator `op_name` (call_kernel): the
/// call is checked against the operator's generated schema, then the
/// prepare registered with `eval` under that name (if any) runs with 16 MB
/// of method memory for its state and scratch, then the chosen eval. Returns
/// ok or the failure, the operator named. Errors: kNotFound when no schema
/// has `op_name`.
inline Status run_kernel(KernelFunction eval, const char* op_name, KernelArgs& args) {
  const OpSchema* schema = schemas::find_op_schema(op_name);
  if (schema == nullptr) {
    return Status::error(Error::kNotFound, "no generated schema for '%s'", op_name);
  }
  Kernel kernel{op_name, eval, KernelPriority::kPortable, KernelKey{}, schema, nullptr};
  for (const Span<const Kernel>& table : kernel_tables_under_test()) {
    for (const Kernel& registered : table) {
      if (registered.eval == eval && std::strcmp(registered.name, op_name) == 0) {
        kernel.prepare = registered.prepare;
      }
    }
  }
  constexpr size_t kMethodBytes = size_t{16} << 20;
  alignas(64) static uint8_t method_memory[kMethodBytes];
  MemoryAllocator allocator(method_memory, kMethodBytes);
  return call_kernel(kernel, args.span(), &allocator);
}

}  // namespace torchlight::portable::kernel_test
