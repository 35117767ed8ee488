// MethodMeta: what a method takes and returns and what memory it needs,
// read from the program without loading the method.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight {

namespace fb {
struct ExecutionPlan;
}  // namespace fb

/// Dtype and shape of one tensor input or output. Spans borrow program memory.
struct TensorInfo {
  ScalarType dtype = ScalarType::kFloat;
  Span<const int32_t> sizes;  // Upper bounds for dynamic tensors.
  Span<const uint8_t> dim_order;
  TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic;
  bool memory_planned = false;  // Storage lives in a planned arena.
  size_t nbytes = 0;            // At the (upper-bound) sizes.
};

class MethodMeta {
 public:
  /// `plan` must be a verified plan of a loaded Program, which outlives this.
  explicit MethodMeta(const fb::ExecutionPlan* plan) : plan_(plan) {}

  std::string_view name() const;

  size_t num_inputs() const;
  /// Errors: kInvalidArgument (index out of range), kInvalidProgram (the
  /// input index points outside the values).
  Result<Tag> input_tag(size_t index) const;
  /// Errors as input_tag, plus kInvalidType when the input is not a tensor.
  Result<TensorInfo> input_tensor_info(size_t index) const;

  size_t num_outputs() const;
  Result<Tag> output_tag(size_t index) const;
  Result<TensorInfo> output_tensor_info(size_t index) const;

  /// Planned arenas the caller must provide (entry 0 of the file's list is
  /// reserved and not counted).
  size_t num_planned_buffers() const;
  Result<int64_t> planned_buffer_size(size_t index) const;

  size_t num_operators() const;
  /// "aten::add.out" written into `out` (NUL-terminated, cut to fit).
  Result<const char*> operator_name(size_t index, char* out, size_t out_size) const;

  size_t num_backends() const;
  /// Backend id of delegate `index`, e.g. "XnnpackBackend".
  Result<std::string_view> backend_name(size_t index) const;
  bool uses_backend(std::string_view name) const;

  size_t num_values() const;
  size_t num_instructions() const;

 private:
  Result<Tag> value_tag(int32_t value_index) const;
  Result<TensorInfo> tensor_info(int32_t value_index) const;

  const fb::ExecutionPlan* plan_;
};

}  // namespace torchlight
