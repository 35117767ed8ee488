// Result<T>: a value or the Status that explains why there is none.
//
// Move-only, so a Result that owns something (a Program, a buffer) is never
// duplicated by accident. Use TL_ASSIGN_OR_RETURN to unwrap in functions
// that themselves return Status or Result.
#pragma once

#include <new>
#include <type_traits>
#include <utility>

#include "runtime/core/status.h"
#include "runtime/platform/assert.h"

namespace torchlight {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T&& value) : has_value_(true) {  // NOLINT: implicit by design
    new (&value_) T(std::move(value));
  }
  Result(const T& value) : has_value_(true) {  // NOLINT
    new (&value_) T(value);
  }
  /// An error. Passing an ok Status is an internal bug and becomes kInternal.
  Result(Status status) : status_(status), has_value_(false) {  // NOLINT
    if (status_.ok()) status_ = Status::error(Error::kInternal, "Result built from an ok Status");
  }
  Result(Error code) : Result(Status(code)) {}  // NOLINT

  Result(Result&& other) noexcept : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Result& operator=(Result&& other) noexcept {
    if (this != &other) {
      reset();
      status_ = other.status_;
      has_value_ = other.has_value_;
      if (has_value_) new (&value_) T(std::move(other.value_));
    }
    return *this;
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() { reset(); }

  bool ok() const { return has_value_; }
  Error error() const { return status_.code(); }
  const Status& status() const { return status_; }

  T& get() {
    TL_DEBUG_ASSERT(has_value_);
    return value_;
  }
  const T& get() const {
    TL_DEBUG_ASSERT(has_value_);
    return value_;
  }
  T& operator*() { return get(); }
  const T& operator*() const { return get(); }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }

 private:
  void reset() {
    if (has_value_) value_.~T();
    has_value_ = false;
  }

  union {
    T value_;
  };
  Status status_;
  bool has_value_;
};

}  // namespace torchlight

#define TL_INTERNAL_CONCAT2(a, b) a##b
#define TL_INTERNAL_CONCAT(a, b) TL_INTERNAL_CONCAT2(a, b)

/// Returns the Status from the enclosing function when `expr` is not ok.
#define TL_RETURN_IF_ERROR(expr)                       \
  do {                                                 \
    ::torchlight::Status tl_status_ = (expr);          \
    if (!tl_status_.ok()) return tl_status_;           \
  } while (0)

/// `TL_ASSIGN_OR_RETURN(auto x, make_x())`: unwraps a Result or returns its
/// Status from the enclosing function.
#define TL_ASSIGN_OR_RETURN(lhs, expr) \
  TL_INTERNAL_ASSIGN_OR_RETURN(TL_INTERNAL_CONCAT(tl_result_, __LINE__), lhs, expr)
#define TL_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp.get())

/// Returns Status::error(code, ...) when `cond` is false. For checks on data
/// that comes from a file or a caller: never an assert.
#define TL_CHECK_OR_RETURN(cond, code, ...)                        \
  do {                                                             \
    if (!(cond)) return ::torchlight::Status::error(code, __VA_ARGS__); \
  } while (0)
