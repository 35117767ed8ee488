// Test helpers for kernels that take list arguments: owned int and double
// lists that produce EValues the way a program's values do.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/core/evalue.h"

namespace torchlight::portable::kernel_test {

/// A Tensor?[] argument (as index's indices): boxed items, None where an
/// item is an empty EValue. Not copyable: the EValue points into it.
class OptionalTensorListArg {
 public:
  explicit OptionalTensorListArg(std::vector<EValue> items) : items_(std::move(items)) {
    for (EValue& e : items_) pointers_.push_back(&e);
    scratch_.resize(items_.size());
  }
  OptionalTensorListArg(const OptionalTensorListArg&) = delete;
  OptionalTensorListArg& operator=(const OptionalTensorListArg&) = delete;

  EValue evalue() {
    return EValue(BoxedList<Tensor>(pointers_.data(), scratch_.data(), items_.size()), true);
  }

 private:
  std::vector<EValue> items_;
  std::vector<EValue*> pointers_;
  std::vector<Tensor> scratch_;
};

/// An int[] argument: boxed items, as the executor builds them. Not
/// copyable: the EValue points into its members.
class IntListArg {
 public:
  explicit IntListArg(std::vector<int64_t> values) : values_(std::move(values)) {
    for (int64_t v : values_) items_.emplace_back(v);
    for (EValue& e : items_) pointers_.push_back(&e);
    scratch_.resize(values_.size());
  }
  IntListArg(const IntListArg&) = delete;
  IntListArg& operator=(const IntListArg&) = delete;

  EValue evalue() {
    return EValue(BoxedList<int64_t>(pointers_.data(), scratch_.data(), values_.size()));
  }

 private:
  std::vector<int64_t> values_;
  std::vector<EValue> items_;
  std::vector<EValue*> pointers_;
  std::vector<int64_t> scratch_;
};

/// A float[] argument.
class DoubleListArg {
 public:
  explicit DoubleListArg(std::vector<double> values) : values_(std::move(values)) {}
  DoubleListArg(const DoubleListArg&) = delete;
  DoubleListArg& operator=(const DoubleListArg&) = delete;

  EValue evalue() const { return EValue(Span<const double>(values_.data(), values_.size())); }

 private:
  std::vector<double> values_;
};

}  // namespace torchlight::portable::kernel_test
