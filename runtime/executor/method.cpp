// Method: inputs, outputs and the execute loop. Loading is in method_loader.cpp.
#include "runtime/executor/method.h"

#include <cstring>

#include "runtime/backend/backend_interface.h"
#include "runtime/core/event_tracer.h"
#include "schema/program_generated.h"

namespace torchlight {

Method::Method(Method&& other) noexcept
    : program_(other.program_),
      plan_(other.plan_),
      memory_manager_(other.memory_manager_),
      event_tracer_(other.event_tracer_),
      values_(other.values_),
      num_values_(other.num_values_),
      input_indices_(other.input_indices_),
      num_inputs_(other.num_inputs_),
      input_set_(other.input_set_),
      output_indices_(other.output_indices_),
      num_outputs_(other.num_outputs_),
      instructions_(other.instructions_),
      num_instructions_(other.num_instructions_),
      delegates_(other.delegates_),
      num_delegates_(other.num_delegates_),
      max_steps_(other.max_steps_),
      scratch_(other.scratch_),
      scratch_bytes_(other.scratch_bytes_) {
  // The moved-from Method no longer owns the delegates.
  other.num_delegates_ = 0;
  other.delegates_ = nullptr;
}

Method::~Method() {
  for (size_t i = 0; i < num_delegates_; ++i) {
    delegates_[i].backend->destroy(delegates_[i].handle);
  }
}

std::string_view Method::name() const {
  return plan_->name() == nullptr ? std::string_view()
                                  : std::string_view(plan_->name()->c_str(), plan_->name()->size());
}

Status Method::set_input(size_t index, const EValue& value) {
  const int name_len = static_cast<int>(name().size());
  const char* method = name().data();
  TL_CHECK_OR_RETURN(index < num_inputs_, Error::kInvalidArgument,
                     "method '%.*s' has %zu inputs; input index %zu is out of range", name_len,
                     method, num_inputs_, index);
  EValue& slot = values_[input_indices_[index]];
  if (!slot.is_tensor()) {
    TL_CHECK_OR_RETURN(value.tag() == slot.tag(), Error::kInvalidType,
                       "input %zu of method '%.*s' must be %s, got %s", index, name_len, method,
                       to_string(slot.tag()), to_string(value.tag()));
    slot = value;
    input_set_[index] = true;
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(value.is_tensor(), Error::kInvalidType,
                     "input %zu of method '%.*s' must be a Tensor, got %s", index, name_len, method,
                     to_string(value.tag()));
  const Tensor expected = slot.to_tensor();
  const Tensor given = value.to_tensor();
  char want[128];
  char got[128];
  TL_CHECK_OR_RETURN(given.defined(), Error::kInvalidArgument,
                     "input %zu of method '%.*s' is an undefined tensor", index, name_len, method);
  TL_CHECK_OR_RETURN(given.scalar_type() == expected.scalar_type(), Error::kInvalidType,
                     "input %zu of method '%.*s' must have dtype %s, got %s", index, name_len,
                     method, to_string(expected.scalar_type()), to_string(given.scalar_type()));
  TL_CHECK_OR_RETURN(given.dim() == expected.dim(), Error::kInvalidArgument,
                     "input %zu of method '%.*s' must be %zu-d with sizes %s, got %zu-d %s", index,
                     name_len, method, expected.dim(),
                     format_sizes(expected.sizes(), want, sizeof(want)), given.dim(),
                     format_sizes(given.sizes(), got, sizeof(got)));
  for (size_t d = 0; d < given.dim(); ++d) {
    TL_CHECK_OR_RETURN(given.dim_order()[d] == expected.dim_order()[d], Error::kInvalidArgument,
                       "input %zu of method '%.*s' has a different memory layout (dim_order) than "
                       "the program expects",
                       index, name_len, method);
  }
  TL_CHECK_OR_RETURN(given.numel() == 0 || given.const_data_ptr() != nullptr,
                     Error::kInvalidArgument, "input %zu of method '%.*s' has no data", index,
                     name_len, method);
  const fb::Tensor* spec =
      plan_->values()->Get(static_cast<uint32_t>(input_indices_[index]))->val_as_Tensor();
  TL_CHECK_OR_RETURN(spec->allocation_info() != nullptr || spec->data_buffer_idx() == 0,
                     Error::kInvalidProgram,
                     "input %zu of method '%.*s' is a constant tensor and cannot be set", index,
                     name_len, method);
  const bool planned = spec->allocation_info() != nullptr;
  if (!planned) {
    // Borrow the caller's data: its elements are the capacity from now on.
    // Until the resize below succeeds the sizes may not match the buffer,
    // so the input counts as unset.
    input_set_[index] = false;
    TL_CHECK_OR_RETURN(
        expected.shape_dynamism() != TensorShapeDynamism::kDynamicBound ||
            given.numel() <= plan_numel(input_indices_[index]),
        Error::kInvalidArgument,
        "input %zu of method '%.*s' has sizes %s (%lld elements), more than the %lld the "
        "program allows",
        index, name_len, method, format_sizes(given.sizes(), got, sizeof(got)),
        static_cast<long long>(given.numel()),
        static_cast<long long>(plan_numel(input_indices_[index])));
    expected.impl()->bind_storage(given.mutable_data_ptr(), given.numel());
  }
  // Planned storage keeps its capacity, so a larger input fails here.
  Status resized = expected.resize(given.sizes());
  if (!resized.ok()) {
    return resized.with_context("input %zu of method '%.*s'", index, name_len, method);
  }
  if (planned && given.nbytes() > 0 && expected.const_data_ptr() != given.const_data_ptr()) {
    TL_CHECK_OR_RETURN(given.numel() <= expected.impl()->capacity_numel(), Error::kInvalidArgument,
                       "input %zu of method '%.*s' has %lld elements, more than the %lld planned",
                       index, name_len, method, static_cast<long long>(given.numel()),
                       static_cast<long long>(expected.impl()->capacity_numel()));
    std::memcpy(expected.mutable_data_ptr(), given.const_data_ptr(), given.nbytes());
  }
  input_set_[index] = true;
  return Error::kOk;
}

Status Method::set_output_data_ptr(size_t index, void* data, size_t nbytes) {
  TL_CHECK_OR_RETURN(index < num_outputs_, Error::kInvalidArgument,
                     "method '%.*s' has %zu outputs; output index %zu is out of range",
                     static_cast<int>(name().size()), name().data(), num_outputs_, index);
  EValue& slot = values_[output_indices_[index]];
  TL_CHECK_OR_RETURN(slot.is_tensor(), Error::kInvalidType, "output %zu is %s, not a Tensor",
                     index, to_string(slot.tag()));
  const Tensor t = slot.to_tensor();
  const fb::Tensor* spec =
      plan_->values()->Get(static_cast<uint32_t>(output_indices_[index]))->val_as_Tensor();
  TL_CHECK_OR_RETURN(spec->allocation_info() == nullptr && spec->data_buffer_idx() == 0,
                     Error::kInvalidArgument,
                     "output %zu already has planned memory; it cannot be rebound", index);
  // The caller's buffer is the capacity from now on: a kernel resizing the
  // output (dynamic shapes) fails rather than write past it.
  TL_CHECK_OR_RETURN(nbytes >= t.nbytes(), Error::kInvalidArgument,
                     "output %zu needs %zu bytes, the buffer given has %zu", index, t.nbytes(), nbytes);
  t.impl()->bind_storage(data, static_cast<int64_t>(nbytes / t.element_size()));
  return Error::kOk;
}

Result<const EValue*> Method::output(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_outputs_, Error::kInvalidArgument,
                     "method '%.*s' has %zu outputs; output index %zu is out of range",
                     static_cast<int>(name().size()), name().data(), num_outputs_, index);
  return &values_[output_indices_[index]];
}

int64_t Method::plan_numel(int32_t value_index) const {
  const fb::Tensor* spec = plan_->values()->Get(static_cast<uint32_t>(value_index))->val_as_Tensor();
  int64_t numel = 0;
  // Valid: the loader checked these sizes.
  if (spec->sizes() != nullptr) compute_numel({spec->sizes()->data(), spec->sizes()->size()}, &numel);
  return spec->sizes() == nullptr ? 1 : numel;
}

const EValue& Method::input_value(size_t index) const { return values_[input_indices_[index]]; }

Status Method::execute() {
  const int name_len = static_cast<int>(name().size());
  for (size_t i = 0; i < num_inputs_; ++i) {
    TL_CHECK_OR_RETURN(input_set_[i], Error::kInvalidState,
                       "method '%.*s': input %zu was not set (call set_input before execute)",
                       name_len, name().data(), i);
  }
  for (size_t i = 0; i < num_outputs_; ++i) {
    const EValue& out = values_[output_indices_[i]];
    TL_CHECK_OR_RETURN(!out.is_tensor() || out.to_tensor().numel() == 0 ||
                           out.to_tensor().const_data_ptr() != nullptr,
                       Error::kInvalidState,
                       "method '%.*s': output %zu has no memory (bind it with set_output_data_ptr)",
                       name_len, name().data(), i);
  }
  EventTracerEntry method_entry;
  if (event_tracer_ != nullptr) method_entry = event_tracer_->begin_method(name().data(), false);
  // One context for the whole run: a kernel call only sets its name and
  // state, and a Status is copied out only when something fails.
  KernelContext context(memory_manager_->temp_allocator, event_tracer_, "");
  context.set_scratch(scratch_, scratch_bytes_);
  size_t pc = 0;
  uint64_t steps = 0;
  Status status;
  while (pc < num_instructions_) {
    if (++steps > max_steps_) {
      status = Status::error(Error::kOutOfResources,
                             "method '%.*s' ran more than %llu instructions without finishing; the "
                             "program loops (raise the cap with set_max_steps)",
                             name_len, name().data(), static_cast<unsigned long long>(max_steps_));
      break;
    }
    const ResolvedInstruction& instruction = instructions_[pc];
    if (instruction.kind == ResolvedInstruction::Kind::kKernel && event_tracer_ == nullptr) {
      run_kernel(instruction, context);
      if (context.failed()) {
        status = instruction_failed(pc, context.status());
        break;
      }
      ++pc;
      continue;
    }
    status = execute_instruction(pc, &pc, context);
    if (!status.ok()) break;
  }
  if (event_tracer_ != nullptr) {
    if (status.ok()) {
      for (size_t i = 0; i < num_outputs_; ++i) event_tracer_->log_output(i, values_[output_indices_[i]]);
    }
    event_tracer_->end_method(method_entry);
  }
  return status;
}

void Method::run_kernel(const ResolvedInstruction& instruction, KernelContext& context) const {
  context.set_call(instruction.name, instruction.state);
  instruction.kernel(context, instruction.args);
  if (memory_manager_->temp_allocator != nullptr) memory_manager_->temp_allocator->reset();
}

Status Method::instruction_failed(size_t index, const Status& status) const {
  Status failed = status;
  return failed.with_context("method '%.*s', instruction %zu (%s)", static_cast<int>(name().size()),
                             name().data(), index, instructions_[index].name);
}

// A JumpFalseCall's condition: a Bool, or a Bool tensor (torch.cond's
// predicate), which holds when all its elements do. Checked again here
// because a MoveCall may have replaced the value since load.
Status Method::jump_condition(uint32_t value_index, bool* holds) const {
  const EValue& condition = values_[value_index];
  if (condition.is_bool()) {
    *holds = condition.to_bool();
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(condition.is_tensor(), Error::kInvalidProgram,
                     "jump condition value %u is %s, not Bool or a Bool tensor", value_index,
                     to_string(condition.tag()));
  const Tensor t = condition.to_tensor();
  TL_CHECK_OR_RETURN(t.scalar_type() == ScalarType::kBool, Error::kInvalidProgram,
                     "jump condition value %u is a %s tensor, not Bool", value_index,
                     to_string(t.scalar_type()));
  const auto* data = t.const_data_ptr<uint8_t>();  // Bytes: any non-zero is true.
  TL_CHECK_OR_RETURN(t.numel() == 0 || data != nullptr, Error::kInvalidState,
                     "jump condition value %u is a tensor with no memory", value_index);
  *holds = true;
  for (int64_t i = 0; i < t.numel() && *holds; ++i) *holds = data[i] != 0;
  return Error::kOk;
}

// FreeCall ends the method's use of a tensor whose memory it does not own
// (load checks the value has no planned or constant storage). An unbound
// tensor loses its data pointer. A freed input is marked unset, so the next
// execute asks for set_input again instead of reading a buffer the caller may
// since have released; its pointer stays until then, so even a malformed
// program reading the value after the free still reads the caller's memory,
// which is valid until execute returns.
Status Method::free_value(const ResolvedInstruction& instruction) {
  EValue& value = values_[instruction.a];
  TL_CHECK_OR_RETURN(value.is_tensor(), Error::kInvalidProgram, "freed value %u is %s, not a Tensor",
                     instruction.a, to_string(value.tag()));
  if (instruction.b > 0) {
    input_set_[instruction.b - 1] = false;
  } else if (value.to_tensor().shape_dynamism() == TensorShapeDynamism::kDynamicUnbound) {
    value.to_tensor().impl()->bind_storage(nullptr, 0);
  }
  return Error::kOk;
}

namespace {

InstructionKind tracer_kind(ResolvedInstruction::Kind kind) {
  using Kind = ResolvedInstruction::Kind;
  switch (kind) {
    case Kind::kKernel: return InstructionKind::kKernel;
    case Kind::kDelegate: return InstructionKind::kDelegate;
    case Kind::kMove: return InstructionKind::kMove;
    case Kind::kJumpFalse: return InstructionKind::kJumpFalse;
    case Kind::kFree: return InstructionKind::kFree;
  }
  return InstructionKind::kKernel;
}

}  // namespace

Status Method::execute_instruction(size_t index, size_t* next, KernelContext& context) {
  using Kind = ResolvedInstruction::Kind;
  const ResolvedInstruction& instruction = instructions_[index];
  *next = index + 1;
  EventTracerEntry entry;
  if (event_tracer_ != nullptr) {
    entry = event_tracer_->begin_instruction(0, index, instruction.name, tracer_kind(instruction.kind));
  }
  Status status;
  switch (instruction.kind) {
    case Kind::kKernel:
      run_kernel(instruction, context);
      if (context.failed()) status = context.status();
      break;
    case Kind::kDelegate: {
      const LoadedDelegate& delegate = delegates_[instruction.delegate_index];
      BackendExecutionContext backend_context;
      backend_context.temp_allocator = memory_manager_->temp_allocator;
      backend_context.event_tracer = event_tracer_;
      status = delegate.backend->execute(backend_context, delegate.handle, instruction.args);
      if (memory_manager_->temp_allocator != nullptr) memory_manager_->temp_allocator->reset();
      break;
    }
    case Kind::kMove:
      values_[instruction.b] = values_[instruction.a];
      break;
    case Kind::kJumpFalse: {
      bool taken = false;
      status = jump_condition(instruction.a, &taken);
      if (status.ok() && !taken) *next = instruction.b;
      break;
    }
    case Kind::kFree:
      status = free_value(instruction);
      break;
  }
  if (event_tracer_ != nullptr) {
    event_tracer_->end_instruction(entry);
    if (status.ok() && instruction.kind == Kind::kKernel && !instruction.args.empty()) {
      const EValue* result = instruction.args[instruction.args.size() - 1];
      event_tracer_->log_value(static_cast<size_t>(result - values_), *result);
    } else if (status.ok() && instruction.kind == Kind::kDelegate) {
      // As upstream: every argument of the call, inputs and outputs alike.
      for (const EValue* arg : instruction.args) {
        event_tracer_->log_value(static_cast<size_t>(arg - values_), *arg);
      }
    }
  }
  if (!status.ok()) return instruction_failed(index, status);
  return Error::kOk;
}

}  // namespace torchlight
