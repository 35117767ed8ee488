// Span<T>: a borrowed pointer plus length. The caller guarantees the data
// outlives the span; nothing here owns or frees memory.
#pragma once

#include <cstddef>
#include <type_traits>

namespace torchlight {

template <typename T>
class Span {
 public:
  // Container typedefs, so standard algorithms and test matchers accept spans.
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = T*;

  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  template <size_t N>
  constexpr Span(T (&array)[N]) : data_(array), size_(N) {}  // NOLINT
  /// Span<const T> from Span<T>.
  template <typename U>
  constexpr Span(const Span<U>& other) : data_(other.data()), size_(other.size()) {}  // NOLINT

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  /// Elements [offset, offset + count); the caller checks the bounds.
  constexpr Span subspan(size_t offset, size_t count) const { return Span(data_ + offset, count); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace torchlight
