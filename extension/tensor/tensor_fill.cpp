#include "extension/tensor/tensor_fill.h"

#include <cstddef>
#include <type_traits>

#include "runtime/core/half.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace {

// SplitMix64: tiny, fast, and fully determined by the seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1) on a grid of 2^-23, exact in float.
  float next_unit() { return static_cast<float>(next() >> 40) * (1.0f / 8388608.0f) - 1.0f; }

 private:
  uint64_t state_;
};

Status check_fillable(const Tensor& tensor, const char* what) {
  TL_CHECK_OR_RETURN(tensor.defined(), Error::kInvalidArgument, "%s: tensor is undefined", what);
  TL_CHECK_OR_RETURN(tensor.const_data_ptr() != nullptr || tensor.numel() == 0,
                     Error::kInvalidArgument, "%s: tensor has %lld elements but no data", what,
                     static_cast<long long>(tensor.numel()));
  return Error::kOk;
}

// Calls `fill(T* data, size_t n)` with the storage type for the dtype.
template <typename Fill>
Status dispatch(const Tensor& tensor, const char* what, Fill fill) {
  TL_RETURN_IF_ERROR(check_fillable(tensor, what));
  const size_t n = static_cast<size_t>(tensor.numel());
  void* data = tensor.mutable_data_ptr();
  switch (tensor.scalar_type()) {
    case ScalarType::kBool: fill(static_cast<bool*>(data), n); break;
    case ScalarType::kByte: fill(static_cast<uint8_t*>(data), n); break;
    case ScalarType::kChar: fill(static_cast<int8_t*>(data), n); break;
    case ScalarType::kShort: fill(static_cast<int16_t*>(data), n); break;
    case ScalarType::kInt: fill(static_cast<int32_t*>(data), n); break;
    case ScalarType::kLong: fill(static_cast<int64_t*>(data), n); break;
    case ScalarType::kUInt16: fill(static_cast<uint16_t*>(data), n); break;
    case ScalarType::kUInt32: fill(static_cast<uint32_t*>(data), n); break;
    case ScalarType::kUInt64: fill(static_cast<uint64_t*>(data), n); break;
    case ScalarType::kHalf: fill(static_cast<Half*>(data), n); break;
    case ScalarType::kBFloat16: fill(static_cast<BFloat16*>(data), n); break;
    case ScalarType::kFloat: fill(static_cast<float*>(data), n); break;
    case ScalarType::kDouble: fill(static_cast<double*>(data), n); break;
    default:
      return Status::error(Error::kNotSupported, "%s: dtype %s is not supported", what,
                           to_string(tensor.scalar_type()));
  }
  return Error::kOk;
}

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                          std::is_same_v<T, BFloat16>;

}  // namespace

Status fill_ones(const Tensor& tensor) {
  return dispatch(tensor, "fill_ones", [](auto* data, size_t n) {
    using T = std::remove_pointer_t<decltype(data)>;
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kIsFloat<T>) {
        data[i] = T(1.0f);
      } else {
        data[i] = static_cast<T>(1);
      }
    }
  });
}

Status fill_random(const Tensor& tensor, uint64_t seed) {
  SplitMix64 rng(seed);
  return dispatch(tensor, "fill_random", [&rng](auto* data, size_t n) {
    using T = std::remove_pointer_t<decltype(data)>;
    for (size_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = (rng.next() >> 63) != 0;
      } else if constexpr (kIsFloat<T>) {
        data[i] = T(rng.next_unit());
      } else if constexpr (std::is_signed_v<T>) {
        data[i] = static_cast<T>(static_cast<int>(rng.next() >> 60) - 8);
      } else {
        data[i] = static_cast<T>(rng.next() >> 60);
      }
    }
  });
}

Status fill_values(const Tensor& tensor, const std::function<double()>& value) {
  return dispatch(tensor, "fill_values", [&value](auto* data, size_t n) {
    using T = std::remove_pointer_t<decltype(data)>;
    for (size_t i = 0; i < n; ++i) {
      const double v = value();
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = v != 0;
      } else if constexpr (kIsFloat<T> && !std::is_floating_point_v<T>) {
        data[i] = T(static_cast<float>(v));
      } else {
        data[i] = static_cast<T>(v);
      }
    }
  });
}

}  // namespace torchlight
