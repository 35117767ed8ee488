// Method loading, phase by phase: parse values, bind inputs and outputs,
// initialise delegates, resolve instructions. Internal to the executor.
#pragma once

#include "runtime/core/result.h"
#include "runtime/executor/method.h"

namespace torchlight {

class BackendRegistry;
class EventTracer;
class KernelRegistry;
class Program;

namespace fb {
struct ExecutionPlan;
}  // namespace fb

/// Builds a Method for `plan`, a plan of `program`. See Program::load_method.
Result<Method> load_method_from_plan(const Program& program, const fb::ExecutionPlan* plan,
                                     MemoryManager* memory_manager, const KernelRegistry& kernels,
                                     const BackendRegistry* backends, EventTracer* event_tracer);

}  // namespace torchlight
