// XnnDelegate: what an XNNPACK delegate handle points to. One runtime for
// the whole payload (XnnExecutor), or the payload split into stages with its
// convolutions on Torchlight's conv2d (StagedExecutor, stage_plan.h).
#pragma once

#include <utility>

#include "backends/xnnpack/input_shape_check.h"
#include "backends/xnnpack/named_constants.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"

namespace torchlight {
namespace xnnpack {

class XnnDelegate {
 public:
  virtual ~XnnDelegate() = default;
  /// Binds the call's tensors (args[external id]), reshapes for their
  /// shapes, and runs. With a tracer, per-operator times are reported to it.
  virtual Status execute(Span<EValue*> args, EventTracer* tracer) = 0;

  /// Holds the constants read from the program's named data for as long as
  /// XNNPACK may read them: the delegate's life.
  void keep(NamedConstants named) { named_ = std::move(named); }

  /// The check execute runs on inputs whose dims changed.
  void set_input_check(const InputShapeCheck& check) { input_check_ = check; }

 protected:
  /// Holds the inputs' bound dims (ExternalValue::bound_dims) to the graph;
  /// call it whenever they changed, before XNNPACK runs.
  Status check_input_shapes(const ExternalValue* externals, uint32_t num_externals) {
    return input_check_.check(externals, num_externals);
  }

 private:
  InputShapeCheck input_check_;
  NamedConstants named_;
};

}  // namespace xnnpack
}  // namespace torchlight
