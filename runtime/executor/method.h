// Method: one loaded, runnable method of a Program.
//
// Load (MethodLoader, method_loader.cpp) turns the plan into values and a
// flat table of resolved instructions; execute (method.cpp) is a bounded
// loop over that table that does no lookups. All memory comes from the
// MemoryManager.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method_meta.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

class BackendInterface;
class EventTracer;
class Program;

namespace fb {
struct ExecutionPlan;
}  // namespace fb

/// One instruction, resolved at load.
struct ResolvedInstruction {
  enum class Kind : uint8_t { kKernel, kDelegate, kMove, kJumpFalse, kFree };
  Kind kind = Kind::kKernel;
  KernelFunction kernel = nullptr;  // kKernel: the prepared eval.
  const void* state = nullptr;      // kKernel: what its prepare stored.
  const char* name = "";            // Operator or backend id, for errors.
  uint32_t delegate_index = 0;      // kDelegate.
  Span<EValue*> args;               // kKernel, kDelegate: argument values.
  uint32_t a = 0;                   // kMove: from; kJumpFalse: cond; kFree: value.
  uint32_t b = 0;                   // kMove: to; kJumpFalse: destination;
                                    // kFree: 1 + input index, 0 if not an input.
};

/// One delegate, initialised at load and destroyed with the Method.
struct LoadedDelegate {
  const BackendInterface* backend = nullptr;
  void* handle = nullptr;
  const char* name = "";
};

class Method {
 public:
  /// Default cap on instructions run by one execute(), so a program whose
  /// jumps loop forever fails instead of hanging.
  static constexpr uint64_t kDefaultMaxSteps = 100000000;

  Method(Method&& other) noexcept;
  Method& operator=(Method&& other) = delete;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  ~Method();

  std::string_view name() const;
  MethodMeta method_meta() const { return MethodMeta(plan_); }

  size_t inputs_size() const { return num_inputs_; }
  size_t outputs_size() const { return num_outputs_; }

  /// Sets input `index`. A tensor must match the input's dtype and rank;
  /// a STATIC input must match its sizes, a DYNAMIC_BOUND one may be smaller
  /// (its sizes are resized, within the planned capacity). A planned input
  /// is copied into its arena; an unplanned one borrows `value`'s data,
  /// which must then outlive every execute(). Scalars must match in type
  /// (an Int input takes only Int). Errors: kInvalidArgument (index, shape),
  /// kInvalidType (tag, dtype), each naming the input and expected vs actual.
  Status set_input(size_t index, const EValue& value);

  /// Binds caller memory to an output that has no planned storage.
  /// Errors: kInvalidArgument (index, size too small, output is planned).
  Status set_output_data_ptr(size_t index, void* data, size_t nbytes);

  /// Runs the method. Errors: kInvalidState when an input was not set (an
  /// unplanned input a FreeCall released in the last run must be set again),
  /// whatever a kernel or delegate reported (message names the operator
  /// and the instruction), kOutOfResources past max_steps.
  Status execute();

  /// Output `index` after execute(). The value borrows method memory.
  /// Errors: kInvalidArgument when out of range.
  Result<const EValue*> output(size_t index) const;
  const EValue& input_value(size_t index) const;

  void set_max_steps(uint64_t steps) { max_steps_ = steps; }

  // --- Internal (used by load and tests) ------------------------------------
  size_t num_values() const { return num_values_; }
  const EValue& value(size_t index) const { return values_[index]; }

 private:
  friend class MethodLoader;

  Method(const Program* program, const fb::ExecutionPlan* plan, MemoryManager* memory_manager,
         EventTracer* event_tracer)
      : program_(program), plan_(plan), memory_manager_(memory_manager), event_tracer_(event_tracer) {}

  Status execute_instruction(size_t index, size_t* next, KernelContext& context);
  void run_kernel(const ResolvedInstruction& instruction, KernelContext& context) const;
  // The failure of instruction `index`, with the method and operator named.
  Status instruction_failed(size_t index, const Status& status) const;
  Status jump_condition(uint32_t value_index, bool* holds) const;
  // Elements of tensor value `value_index` at the sizes the file gives (the
  // upper bound of a DYNAMIC_BOUND tensor).
  int64_t plan_numel(int32_t value_index) const;
  Status free_value(const ResolvedInstruction& instruction);

  const Program* program_;
  const fb::ExecutionPlan* plan_;
  MemoryManager* memory_manager_;
  EventTracer* event_tracer_;

  EValue* values_ = nullptr;
  size_t num_values_ = 0;
  int32_t* input_indices_ = nullptr;  // Validated value indices.
  size_t num_inputs_ = 0;
  bool* input_set_ = nullptr;
  int32_t* output_indices_ = nullptr;
  size_t num_outputs_ = 0;
  ResolvedInstruction* instructions_ = nullptr;
  size_t num_instructions_ = 0;
  LoadedDelegate* delegates_ = nullptr;
  size_t num_delegates_ = 0;
  uint64_t max_steps_ = kDefaultMaxSteps;
  void* scratch_ = nullptr;  // Kernel workspace (see KernelContext::scratch).
  size_t scratch_bytes_ = 0;
};

}  // namespace torchlight
