// The shape XNNPACK gives every value of a payload, inferred at init.
//
// XNNPACK derives each node's output shape from its inputs' shapes (and the
// node's parameters); a value's declared dims are not consulted once the
// runtime exists. Bounds computed from the declared dims alone can then be
// fooled: a payload that declares [1, 4, 1000] for a value its producer
// makes [1, 1000, 4] feeds a later padded convolution a shape the checks
// never saw. So the delegate infers, node by node in list order (the order
// XNNPACK runs them), the shape XNNPACK computes for every value when each
// external input has its declared dims, and holds each node's output to
// its declared value.
#pragma once

#include <cstdint>

#include "backends/xnnpack/definition_context.h"

namespace torchlight {
namespace xnnpack {

/// A value's shape as XNNPACK computes it when every external input has its
/// declared (upper-bound) dims.
struct InferredShape {
  /// False until a node writes the value (external inputs and constants:
  /// known from the start).
  bool known = false;
  uint32_t rank = 0;
  uint64_t dims[XNN_MAX_TENSOR_DIMS] = {};
  /// Bit d set: dim d follows an external input's size (batch, spatial,
  /// sequence dims), which a dynamic-shape payload declares as a symbolic
  /// upper bound; clear: fixed by node parameters or constants (channels).
  uint8_t follows_input = 0;

  /// The element count, in double (no wrap-around for any payload).
  double elements() const;
};

/// Infers the shape of every value (`shapes`: ctx.num_values entries), after
/// define_nodes. For each node in list order it checks what XNNPACK assumes
/// of the node's inputs at these shapes without checking it itself (channel
/// counts against the weights, broadcast and concatenation dims, slice and
/// reshape extents, matmul and attention dims), then each output against its
/// declared value: the same rank; equal in dims fixed by parameters or
/// constants; at most the declared size in dims that follow an external
/// input's size. (Upstream's exporter writes a dynamic dim as the upper
/// bound sympy gives for its expression, which can exceed what that
/// expression is at the inputs' upper bounds, e.g. s - s // 2; a payload
/// does not say which dims are dynamic. Declared sizes stay upper bounds of
/// what XNNPACK computes, so what is planned from them still fits.)
/// Errors: kInvalidProgram "XNNPACK node <index> (<kind>): ..." naming the
/// value and both shapes; also when a node reads a value no earlier node
/// writes, or uses flags whose effect on shapes is not modelled.
Status infer_shapes(const DefinitionContext& ctx, InferredShape* shapes);

}  // namespace xnnpack
}  // namespace torchlight
