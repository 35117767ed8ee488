// InputShapeCheck: init's shape inference, run again at execute for the
// inputs' actual dims.
//
// Init holds every node to the shapes XNNPACK computes at the declared
// input dims. At execute an input may be smaller in any dim, and XNNPACK
// then trusts what it was built for: a convolution built for 8 channels per
// pixel reads 8 per pixel of a 2-channel input, past its end. So whenever
// the inputs' dims change, the inference runs again with them; dims that
// reach a weight or constant (channels, a fully-connected's width) must then
// be exact, and dims that only follow the inputs (batch, spatial, sequence)
// may shrink.
#pragma once

#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/shape_inference.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace xnnpack {

class InputShapeCheck {
 public:
  /// No check (every call passes): for delegates made without one.
  InputShapeCheck() = default;

  /// Copies what the inference reads (each value's declared dims and kind)
  /// into `allocator`, with room for the inferred shapes, so execute
  /// allocates nothing. `ctx.graph` must outlive this (the delegate keeps
  /// the payload). Errors: kDelegateMemoryAllocationFailed.
  static Result<InputShapeCheck> create(const DefinitionContext& ctx, MemoryAllocator* allocator);

  /// Runs the inference with each input's bound dims (ExternalValue::
  /// bound_dims; call it when they changed). Passes at once when every
  /// input has its declared dims (init checked those). Errors:
  /// kInvalidArgument naming the input, the dim, its size and the size the
  /// graph needs there, and the node that refuses it.
  Status check(const ExternalValue* externals, uint32_t num_externals);

 private:
  // Sets each input's dims in shapes_: bound, or declared but for the one
  // dim `only_dim` of input `only_input` (kAll: all bound), then infers.
  Status infer_with(const ExternalValue* externals, uint32_t num_externals, uint32_t only_input,
                    uint32_t only_dim);

  static constexpr uint32_t kAll = 0xFFFFFFFFu;
  DefinitionContext ctx_;  // graph, num_values, shapes and kinds only.
  InferredShape* inferred_ = nullptr;
};

}  // namespace xnnpack
}  // namespace torchlight
