#include "runtime/executor/method_loader.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "runtime/backend/backend_registry.h"
#include "runtime/core/event_tracer.h"
#include "runtime/executor/program.h"
#include "runtime/executor/program_named_data.h"
#include "runtime/executor/unaligned_vector.h"
#include "runtime/kernel/kernel_registry.h"
#include "schema/program_generated.h"

namespace torchlight {

// Fills a Method from its plan. Every index, size and type read from the
// file is checked here, once, so execute() can trust the tables it builds.
class MethodLoader {
 public:
  MethodLoader(const Program& program, const fb::ExecutionPlan* plan, MemoryManager* memory,
               const KernelRegistry& kernels, const BackendRegistry* backends,
               EventTracer* event_tracer)
      : program_(program),
        plan_(plan),
        memory_(memory),
        kernels_(kernels),
        backends_(backends),
        method_(&program, plan, memory, event_tracer) {}

  Result<Method> load() {
    TL_CHECK_OR_RETURN(memory_ != nullptr && memory_->method_allocator != nullptr,
                       Error::kInvalidArgument, "loading a method needs a method allocator");
    method_name_ = plan_->name() != nullptr ? plan_->name()->c_str() : "";
    EventTracer* tracer = method_.event_tracer_;
    EventTracerEntry entry;
    if (tracer != nullptr) entry = tracer->begin_method(method_name_, /*is_load=*/true);
    Status status = load_phases();
    if (tracer != nullptr) tracer->end_method(entry);
    if (!status.ok()) {
      return status.with_context("loading method '%s' of '%s'", method_name_,
                                 program_.loader_name());
    }
    return Method(static_cast<Method&&>(method_));
  }

 private:
  Status load_phases() {
    TL_RETURN_IF_ERROR(parse_values());
    TL_RETURN_IF_ERROR(bind_inputs_outputs());
    TL_RETURN_IF_ERROR(check_tensor_storage());
    TL_RETURN_IF_ERROR(init_delegates());
    TL_RETURN_IF_ERROR(resolve_instructions());
    return allocate_scratch();
  }

  // One workspace for every kernel's scratch, sized by the largest prepared
  // call: instructions run one at a time, and threads of one kernel share
  // its slice of it.
  Status allocate_scratch() {
    if (scratch_bytes_ == 0) return Error::kOk;
    void* scratch = memory_->method_allocator->allocate(scratch_bytes_, kScratchAlignment);
    TL_CHECK_OR_RETURN(scratch != nullptr, Error::kMemoryAllocationFailed,
                       "method allocator is out of memory allocating %zu bytes of kernel scratch "
                       "(%zu bytes used of %zu)",
                       scratch_bytes_, memory_->method_allocator->used(),
                       memory_->method_allocator->capacity());
    method_.scratch_ = scratch;
    method_.scratch_bytes_ = scratch_bytes_;
    return Error::kOk;
  }

  template <typename T>
  Result<T*> allocate(size_t count, const char* what) {
    T* p = memory_->method_allocator->allocate_array<T>(count);
    TL_CHECK_OR_RETURN(p != nullptr, Error::kMemoryAllocationFailed,
                       "method allocator is out of memory allocating %zu %s (%zu bytes used of %zu)",
                       count, what, memory_->method_allocator->used(),
                       memory_->method_allocator->capacity());
    return p;
  }

  // The plan's value of `index` when it exists and has `type`; null otherwise.
  const fb::EValue* value_of_type(int64_t index, fb::KernelTypes type) const {
    const auto* values = plan_->values();
    if (index < 0 || values == nullptr || static_cast<uint64_t>(index) >= values->size()) {
      return nullptr;
    }
    const fb::EValue* v = values->Get(static_cast<uint32_t>(index));
    return v != nullptr && v->val_type() == type ? v : nullptr;
  }

  // --- Values ----------------------------------------------------------------

  Status parse_values() {
    const auto* values = plan_->values();
    const size_t n = values == nullptr ? 0 : values->size();
    TL_ASSIGN_OR_RETURN(method_.values_, allocate<EValue>(n, "values"));
    method_.num_values_ = n;
    // Lists refer to other values, so scalars and tensors come first.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < n; ++i) {
        const fb::EValue* v = values->Get(static_cast<uint32_t>(i));
        TL_CHECK_OR_RETURN(v != nullptr, Error::kInvalidProgram, "value %zu is missing", i);
        const bool is_list = v->val_type() >= fb::KernelTypes::IntList;
        if (is_list == (pass == 1)) {
          Status status = parse_value(i, v);
          if (!status.ok()) return status.with_context("value %zu", i);
        }
      }
    }
    return Error::kOk;
  }

  Status parse_value(size_t i, const fb::EValue* v) {
    EValue& out = method_.values_[i];
    // Program::load checks this for every plan; repeated here because the
    // accessors below would dereference a missing table.
    TL_CHECK_OR_RETURN(v->val_type() == fb::KernelTypes::NONE ||
                           v->val_type() == fb::KernelTypes::Null || v->val() != nullptr,
                       Error::kInvalidProgram, "value has type %s but no value data",
                       fb::EnumNameKernelTypes(v->val_type()));
    switch (v->val_type()) {
      case fb::KernelTypes::NONE:
      case fb::KernelTypes::Null:
        out = EValue();
        return Error::kOk;
      case fb::KernelTypes::Int:
        out = EValue(static_cast<int64_t>(v->val_as_Int()->int_val()));
        return Error::kOk;
      case fb::KernelTypes::Bool:
        out = EValue(v->val_as_Bool()->bool_val());
        return Error::kOk;
      case fb::KernelTypes::Double:
        out = EValue(v->val_as_Double()->double_val());
        return Error::kOk;
      case fb::KernelTypes::String: {
        const auto* s = v->val_as_String()->string_val();
        out = EValue(s == nullptr ? std::string_view() : std::string_view(s->c_str(), s->size()));
        return Error::kOk;
      }
      case fb::KernelTypes::Tensor:
        return parse_tensor(v->val_as_Tensor(), &out);
      case fb::KernelTypes::IntList:
        return parse_int_list(v->val_as_IntList(), &out);
      case fb::KernelTypes::DoubleList: {
        const auto* items = v->val_as_DoubleList()->items();
        const size_t count = items == nullptr ? 0 : items->size();
        TL_ASSIGN_OR_RETURN(double* copy, allocate<double>(count, "list doubles"));
        for (size_t k = 0; k < count; ++k) copy[k] = unaligned_get(items, k);
        out = EValue(Span<const double>(copy, count));
        return Error::kOk;
      }
      case fb::KernelTypes::BoolList: {
        // Copied: flatbuffer bools are bytes, and a byte other than 0/1 read
        // as a C++ bool would be undefined behaviour.
        const auto* items = v->val_as_BoolList()->items();
        const size_t count = items == nullptr ? 0 : items->size();
        TL_ASSIGN_OR_RETURN(bool* copy, allocate<bool>(count, "list bools"));
        for (size_t k = 0; k < count; ++k) {
          copy[k] = reinterpret_cast<const uint8_t*>(items->Data())[k] != 0;
        }
        out = EValue(Span<const bool>(copy, count));
        return Error::kOk;
      }
      case fb::KernelTypes::TensorList:
        return parse_tensor_list(v->val_as_TensorList()->items(), /*optional=*/false, &out);
      case fb::KernelTypes::OptionalTensorList:
        return parse_tensor_list(v->val_as_OptionalTensorList()->items(), /*optional=*/true, &out);
    }
    return Status::error(Error::kInvalidProgram, "unknown value type %d",
                         static_cast<int>(v->val_type()));
  }

  Status parse_int_list(const fb::IntList* list, EValue* out) {
    const auto* items = list->items();
    const size_t count = items == nullptr ? 0 : items->size();
    TL_ASSIGN_OR_RETURN(EValue** boxed, allocate<EValue*>(count, "list items"));
    TL_ASSIGN_OR_RETURN(int64_t* scratch, allocate<int64_t>(count, "list ints"));
    for (size_t k = 0; k < count; ++k) {
      const int64_t index = unaligned_get(items, k);
      TL_CHECK_OR_RETURN(value_of_type(index, fb::KernelTypes::Int) != nullptr,
                         Error::kInvalidProgram,
                         "int list item %zu refers to value %lld, which is not an Int value", k,
                         static_cast<long long>(index));
      boxed[k] = &method_.values_[index];
    }
    *out = EValue(BoxedList<int64_t>(boxed, scratch, count));
    return Error::kOk;
  }

  Status parse_tensor_list(const flatbuffers::Vector<int32_t>* items, bool optional, EValue* out) {
    const size_t count = items == nullptr ? 0 : items->size();
    TL_ASSIGN_OR_RETURN(EValue** boxed, allocate<EValue*>(count, "list items"));
    TL_ASSIGN_OR_RETURN(Tensor* scratch, allocate<Tensor>(count, "list tensors"));
    for (size_t k = 0; k < count; ++k) {
      const int32_t index = items->Get(static_cast<uint32_t>(k));
      if (optional && index == -1) {
        boxed[k] = nullptr;
        continue;
      }
      TL_CHECK_OR_RETURN(value_of_type(index, fb::KernelTypes::Tensor) != nullptr,
                         Error::kInvalidProgram,
                         "tensor list item %zu refers to value %d, which is not a Tensor value", k,
                         index);
      boxed[k] = &method_.values_[index];
    }
    *out = EValue(BoxedList<Tensor>(boxed, scratch, count), optional);
    return Error::kOk;
  }

  Status parse_tensor(const fb::Tensor* t, EValue* out) {
    const auto type = static_cast<ScalarType>(t->scalar_type());
    TL_CHECK_OR_RETURN(is_valid(type), Error::kInvalidProgram, "tensor has invalid scalar type %d",
                       static_cast<int>(t->scalar_type()));
    const auto* fb_sizes = t->sizes();
    const size_t dim = fb_sizes == nullptr ? 0 : fb_sizes->size();
    TL_CHECK_OR_RETURN(dim <= kMaxTensorDim, Error::kInvalidProgram,
                       "tensor has %zu dimensions, more than the %zu supported", dim, kMaxTensorDim);
    const auto* fb_dim_order = t->dim_order();
    TL_CHECK_OR_RETURN(fb_dim_order == nullptr || fb_dim_order->size() == dim ||
                           fb_dim_order->size() == 0,
                       Error::kInvalidProgram, "tensor has %zu sizes but %u dim_order entries",
                       dim, fb_dim_order->size());

    TL_ASSIGN_OR_RETURN(SizesType* sizes, allocate<SizesType>(dim, "tensor sizes"));
    TL_ASSIGN_OR_RETURN(DimOrderType* dim_order, allocate<DimOrderType>(dim, "tensor dim orders"));
    TL_ASSIGN_OR_RETURN(StridesType* strides, allocate<StridesType>(dim, "tensor strides"));
    const bool has_dim_order = fb_dim_order != nullptr && fb_dim_order->size() == dim;
    for (size_t d = 0; d < dim; ++d) {
      sizes[d] = fb_sizes->Get(static_cast<uint32_t>(d));
      dim_order[d] = has_dim_order ? fb_dim_order->Get(static_cast<uint32_t>(d))
                                   : static_cast<DimOrderType>(d);
    }
    char text[128];
    int64_t numel = 0;
    TL_CHECK_OR_RETURN(compute_numel({sizes, dim}, &numel), Error::kInvalidProgram,
                       "tensor sizes %s are negative or overflow", format_sizes({sizes, dim}, text, sizeof(text)));
    size_t nbytes = 0;
    TL_CHECK_OR_RETURN(!__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(type), &nbytes),
                       Error::kInvalidProgram, "tensor of sizes %s is too large",
                       format_sizes({sizes, dim}, text, sizeof(text)));
    TL_CHECK_OR_RETURN(compute_strides({sizes, dim}, {dim_order, dim}, strides),
                       Error::kInvalidProgram, "tensor dim_order is not a permutation of 0..%zu",
                       dim == 0 ? 0 : dim - 1);
    const auto dynamism = static_cast<TensorShapeDynamism>(t->shape_dynamism());
    TL_CHECK_OR_RETURN(static_cast<uint8_t>(dynamism) <= 2, Error::kInvalidProgram,
                       "tensor has invalid shape dynamism %d", static_cast<int>(dynamism));

    TL_ASSIGN_OR_RETURN(void* data, tensor_data(t, nbytes));
    // Kernels reach elements through typed pointers, so a planned offset or
    // constant that is not a multiple of the element size is refused here.
    const size_t alignment = element_size(type);
    TL_CHECK_OR_RETURN(data == nullptr || alignment <= 1 ||
                           reinterpret_cast<uintptr_t>(data) % alignment == 0,
                       Error::kInvalidProgram,
                       "%s tensor data is not aligned to its %zu-byte elements (planned offset or "
                       "constant offset in the file)",
                       to_string(type), alignment);
    void* slot = memory_->method_allocator->allocate(sizeof(TensorImpl), alignof(TensorImpl));
    TL_CHECK_OR_RETURN(slot != nullptr, Error::kMemoryAllocationFailed,
                       "method allocator is out of memory allocating a tensor");
    auto* impl = new (slot) TensorImpl(type, dim, sizes, data, dim_order, strides, dynamism);
    // Planned and constant storage holds exactly the file's sizes (locate()
    // checked them against the arena), so no resize may go past them, not
    // even for a DYNAMIC_UNBOUND tensor.
    if (data != nullptr) impl->bind_storage(data, numel);
    *out = EValue(Tensor(impl));
    return Error::kOk;
  }

  // Where a tensor's bytes live, following the spec's (data_buffer_idx,
  // allocation_info) table.
  Result<void*> tensor_data(const fb::Tensor* t, size_t nbytes) {
    const fb::ExtraTensorInfo* extra = t->extra_tensor_info();
    if (extra != nullptr && extra->location() == fb::TensorDataLocation::EXTERNAL) {
      const char* fqn = extra->fully_qualified_name() ? extra->fully_qualified_name()->c_str() : "?";
      return Status::error(Error::kNotSupported,
                           "tensor '%s' keeps its data in an external .ptd file, which this "
                           "runtime does not load yet",
                           fqn);
    }
    const fb::AllocationDetails* allocation = t->allocation_info();
    const uint32_t buffer_index = t->data_buffer_idx();
    if (allocation != nullptr) {
      TL_CHECK_OR_RETURN(memory_->planned_memory != nullptr, Error::kInvalidArgument,
                         "the method has memory-planned tensors but no planned arenas were given");
      const uint64_t offset = static_cast<uint64_t>(allocation->memory_offset_low()) |
                              static_cast<uint64_t>(allocation->memory_offset_high()) << 32;
      TL_ASSIGN_OR_RETURN(uint8_t* data,
                          memory_->planned_memory->locate(allocation->memory_id(), offset, nbytes));
      if (buffer_index > 0) {
        // A mutable tensor (e.g. a KV cache) with an initial value.
        const size_t list = extra != nullptr ? static_cast<size_t>(extra->mutable_data_segments_idx()) : 0;
        TL_RETURN_IF_ERROR(program_.load_mutable_data(list, buffer_index, data, nbytes));
      }
      return static_cast<void*>(data);
    }
    if (buffer_index > 0) {
      TL_ASSIGN_OR_RETURN(const void* data, program_.constant_data(buffer_index, nbytes));
      // Constants are never written: kernels write only to out arguments,
      // and the emitter never makes a constant an out argument.
      return const_cast<void*>(data);
    }
    return static_cast<void*>(nullptr);  // Bound later: an input, or unbound.
  }

  // --- Inputs and outputs ----------------------------------------------------

  Status bind_inputs_outputs() {
    TL_RETURN_IF_ERROR(copy_indices(plan_->inputs(), "input", &method_.input_indices_,
                                    &method_.num_inputs_));
    TL_RETURN_IF_ERROR(copy_indices(plan_->outputs(), "output", &method_.output_indices_,
                                    &method_.num_outputs_));
    TL_ASSIGN_OR_RETURN(method_.input_set_, allocate<bool>(method_.num_inputs_, "input flags"));
    for (size_t i = 0; i < method_.num_inputs_; ++i) method_.input_set_[i] = false;
    return Error::kOk;
  }

  // Every tensor a kernel may write needs memory. Only inputs (bound by
  // set_input) and outputs (planned, or bound by set_output_data_ptr) may
  // come without it; anything else is a program this runtime cannot run.
  Status check_tensor_storage() const {
    for (size_t i = 0; i < method_.num_values_; ++i) {
      const EValue& v = method_.values_[i];
      if (!v.is_tensor() || v.to_tensor().numel() == 0 || v.to_tensor().const_data_ptr() != nullptr) {
        continue;
      }
      bool bound_later = false;
      for (size_t k = 0; k < method_.num_inputs_; ++k) bound_later |= method_.input_indices_[k] == static_cast<int32_t>(i);
      for (size_t k = 0; k < method_.num_outputs_; ++k) bound_later |= method_.output_indices_[k] == static_cast<int32_t>(i);
      if (bound_later) continue;
      TL_CHECK_OR_RETURN(v.to_tensor().shape_dynamism() != TensorShapeDynamism::kDynamicUnbound,
                         Error::kNotSupported,
                         "value %zu is a DYNAMIC_UNBOUND tensor, which needs memory allocated "
                         "while running; this runtime needs every intermediate tensor planned", i);
      return Status::error(Error::kInvalidProgram,
                           "value %zu is an intermediate tensor with no memory (not planned, not "
                           "constant, not an input or output)", i);
    }
    return Error::kOk;
  }

  Status copy_indices(const flatbuffers::Vector<int32_t>* from, const char* what, int32_t** to,
                      size_t* count) {
    *count = from == nullptr ? 0 : from->size();
    TL_ASSIGN_OR_RETURN(*to, allocate<int32_t>(*count, "input/output indices"));
    for (size_t i = 0; i < *count; ++i) {
      const int32_t index = from->Get(static_cast<uint32_t>(i));
      TL_CHECK_OR_RETURN(index >= 0 && static_cast<size_t>(index) < method_.num_values_,
                         Error::kInvalidProgram, "%s %zu refers to value %d, out of range (%zu values)",
                         what, i, index, method_.num_values_);
      (*to)[i] = index;
    }
    return Error::kOk;
  }

  // --- Delegates ---------------------------------------------------------------

  Status init_delegates() {
    const auto* delegates = plan_->delegates();
    const size_t n = delegates == nullptr ? 0 : delegates->size();
    TL_ASSIGN_OR_RETURN(method_.delegates_, allocate<LoadedDelegate>(n, "delegates"));
    for (size_t i = 0; i < n; ++i) {
      Status status = init_delegate(delegates->Get(static_cast<uint32_t>(i)), &method_.delegates_[i]);
      if (!status.ok()) return status.with_context("delegate %zu", i);
      // Counted only once initialised, so ~Method destroys exactly these.
      method_.num_delegates_ = i + 1;
    }
    return Error::kOk;
  }

  Status init_delegate(const fb::BackendDelegate* delegate, LoadedDelegate* out) {
    TL_CHECK_OR_RETURN(delegate != nullptr && delegate->id() != nullptr, Error::kInvalidProgram,
                       "delegate has no backend id");
    const char* id = delegate->id()->c_str();
    const BackendInterface* backend = backends_ == nullptr ? nullptr : backends_->find(id);
    TL_CHECK_OR_RETURN(backend != nullptr, Error::kBackendMissing,
                       "backend '%s' is not registered in this runtime", id);
    TL_CHECK_OR_RETURN(backend->is_available(), Error::kNotSupported,
                       "backend '%s' is not available on this machine", id);
    const fb::BackendDelegateDataReference* ref = delegate->processed();
    TL_CHECK_OR_RETURN(ref != nullptr, Error::kInvalidProgram, "delegate '%s' has no data", id);
    FreeableBuffer processed;
    if (ref->location() == fb::DataLocation::INLINE) {
      TL_ASSIGN_OR_RETURN(Span<const uint8_t> blob, program_.inline_delegate_data(ref->index()));
      processed = FreeableBuffer(blob.data(), blob.size(), nullptr);
    } else if (ref->location() == fb::DataLocation::SEGMENT) {
      TL_ASSIGN_OR_RETURN(processed, program_.load_segment(
                                         ref->index(), {DataLoader::SegmentKind::kBackend,
                                                        ref->index(), id}));
    } else {
      return Status::error(Error::kInvalidProgram, "delegate '%s' has unknown data location %d", id,
                           static_cast<int>(ref->location()));
    }
    const auto* specs = delegate->compile_specs();
    const size_t num_specs = specs == nullptr ? 0 : specs->size();
    TL_ASSIGN_OR_RETURN(CompileSpec* compile_specs, allocate<CompileSpec>(num_specs, "compile specs"));
    for (size_t k = 0; k < num_specs; ++k) {
      const fb::CompileSpec* spec = specs->Get(static_cast<uint32_t>(k));
      TL_CHECK_OR_RETURN(spec != nullptr && spec->key() != nullptr, Error::kInvalidProgram,
                         "delegate '%s' compile spec %zu has no key", id, k);
      compile_specs[k].key = std::string_view(spec->key()->c_str(), spec->key()->size());
      if (spec->value() != nullptr) {
        compile_specs[k].value = {spec->value()->data(), spec->value()->size()};
      }
    }
    BackendInitContext context;
    context.runtime_allocator = memory_->method_allocator;
    context.method_name = method_name_;
    context.event_tracer = method_.event_tracer_;
    const ProgramNamedData named_data(program_);
    context.named_data_map = &named_data;
    Result<DelegateHandle*> handle =
        backend->init(context, &processed, Span<const CompileSpec>(compile_specs, num_specs));
    if (!handle.ok()) {
      Status status = handle.status();
      return status.with_context("backend '%s' failed to initialise", id);
    }
    *out = LoadedDelegate{backend, handle.get(), id};
    return Error::kOk;
  }

  // --- Instructions ------------------------------------------------------------

  Status resolve_instructions() {
    const auto* chains = plan_->chains();
    TL_CHECK_OR_RETURN(chains != nullptr && chains->size() >= 1 && chains->Get(0) != nullptr,
                       Error::kInvalidProgram, "method has no chain of instructions");
    const auto* instructions = chains->Get(0)->instructions();
    const size_t n = instructions == nullptr ? 0 : instructions->size();
    TL_ASSIGN_OR_RETURN(method_.instructions_, allocate<ResolvedInstruction>(n, "instructions"));
    method_.num_instructions_ = n;
    TL_RETURN_IF_ERROR(make_operator_names());
    TL_ASSIGN_OR_RETURN(kernel_written_, allocate<bool>(method_.num_values_, "value flags"));
    TL_ASSIGN_OR_RETURN(move_source_, allocate<bool>(method_.num_values_, "value flags"));
    TL_ASSIGN_OR_RETURN(delegate_arg_, allocate<bool>(method_.num_values_, "value flags"));
    for (size_t v = 0; v < method_.num_values_; ++v) {
      kernel_written_[v] = move_source_[v] = delegate_arg_[v] = false;
    }
    mark_delegate_args(instructions);

    MissingOperators missing;
    for (size_t i = 0; i < n; ++i) {
      const fb::Instruction* instruction = instructions->Get(static_cast<uint32_t>(i));
      TL_CHECK_OR_RETURN(instruction != nullptr, Error::kInvalidProgram, "instruction %zu is missing", i);
      Status status = resolve_instruction(instruction, &method_.instructions_[i], &missing);
      if (!status.ok()) return status.with_context("instruction %zu", i);
    }
    TL_RETURN_IF_ERROR(check_constant_moves());
    if (missing.count > 0) {
      return Status::error(Error::kOperatorMissing, "%zu operator%s ha%s no kernel in this runtime: %s",
                           missing.count, missing.count == 1 ? "" : "s",
                           missing.count == 1 ? "s" : "ve", missing.text);
    }
    return Error::kOk;
  }

  // "aten::add" + "out" -> "aten::add.out", one string per operator, kept in
  // method memory for kernel lookup and error messages.
  Status make_operator_names() {
    const auto* operators = plan_->operators();
    num_operators_ = operators == nullptr ? 0 : operators->size();
    TL_ASSIGN_OR_RETURN(operator_names_, allocate<const char*>(num_operators_, "operator names"));
    for (size_t i = 0; i < num_operators_; ++i) {
      const fb::Operator* op = operators->Get(static_cast<uint32_t>(i));
      TL_CHECK_OR_RETURN(op != nullptr && op->name() != nullptr && op->name()->size() > 0,
                         Error::kInvalidProgram, "operator %zu has no name", i);
      // A NUL inside a name would make lookups and messages see a shorter one.
      const auto has_nul = [](const flatbuffers::String* s) {
        return std::memchr(s->data(), '\0', s->size()) != nullptr;
      };
      TL_CHECK_OR_RETURN(!has_nul(op->name()) && (op->overload() == nullptr || !has_nul(op->overload())),
                         Error::kInvalidProgram, "operator %zu has a NUL byte inside its name", i);
      const size_t name_len = op->name()->size();
      const size_t overload_len = op->overload() == nullptr ? 0 : op->overload()->size();
      TL_ASSIGN_OR_RETURN(char* text, allocate<char>(name_len + overload_len + 2, "operator name"));
      std::memcpy(text, op->name()->c_str(), name_len);
      size_t used = name_len;
      if (overload_len > 0) {
        text[used++] = '.';
        std::memcpy(text + used, op->overload()->c_str(), overload_len);
        used += overload_len;
      }
      text[used] = '\0';
      operator_names_[i] = text;
    }
    return Error::kOk;
  }

  // Operators without a kernel, listed once each in one message.
  struct MissingOperators {
    size_t count = 0;
    size_t used = 0;
    char text[Status::kMaxMessage - 64] = "";

    void add(const char* name, const char* why) {
      // Compare quoted names: a bare substring test would take "add.out" as
      // already listed inside "aten::add.out" and leave its kernel unresolved.
      char needle[Status::kMaxMessage];
      snprintf(needle, sizeof(needle), "'%s'", name);
      if (std::strstr(text, needle) != nullptr) return;
      ++count;
      if (used >= sizeof(text)) return;
      int n = snprintf(text + used, sizeof(text) - used, "%s'%s'%s", used ? ", " : "", name, why);
      if (n > 0) used += static_cast<size_t>(n);
    }
  };

  Result<Span<EValue*>> resolve_args(const flatbuffers::Vector<int32_t>* args) {
    const size_t count = args == nullptr ? 0 : args->size();
    TL_ASSIGN_OR_RETURN(EValue** pointers, allocate<EValue*>(count, "instruction arguments"));
    for (size_t k = 0; k < count; ++k) {
      const int32_t index = args->Get(static_cast<uint32_t>(k));
      TL_CHECK_OR_RETURN(index >= 0 && static_cast<size_t>(index) < method_.num_values_,
                         Error::kInvalidProgram, "argument %zu refers to value %d, out of range (%zu values)",
                         k, index, method_.num_values_);
      pointers[k] = &method_.values_[index];
    }
    return Span<EValue*>(pointers, count);
  }

  // True for a tensor whose data is program constant (read-only when mapped).
  bool is_constant_tensor(int64_t index) const {
    const fb::EValue* v = value_of_type(index, fb::KernelTypes::Tensor);
    if (v == nullptr) return false;
    const fb::Tensor* t = v->val_as_Tensor();
    return t->allocation_info() == nullptr && t->data_buffer_idx() > 0;
  }

  // Marks every value a delegate call receives: a delegate may write any of
  // its arguments, so none of them counts as constant for kernels, even one
  // a later instruction passes. Runs before any kernel is prepared.
  void mark_delegate_args(const flatbuffers::Vector<flatbuffers::Offset<fb::Instruction>>* instructions) {
    const size_t n = instructions == nullptr ? 0 : instructions->size();
    for (size_t i = 0; i < n; ++i) {
      const fb::Instruction* instruction = instructions->Get(static_cast<uint32_t>(i));
      if (instruction == nullptr || instruction->instr_args_type() != fb::InstructionArguments::DelegateCall) {
        continue;
      }
      const fb::DelegateCall* call = instruction->instr_args_as_DelegateCall();
      if (call == nullptr || call->args() == nullptr) continue;
      for (int32_t index : *call->args()) {
        if (index >= 0 && static_cast<size_t>(index) < method_.num_values_) delegate_arg_[index] = true;
      }
    }
  }

  // Bit k set: argument k is a program constant that nothing writes. Kernels
  // may not write constants and moves may not target them (both refused at
  // load), so what is left to exclude is a delegate's argument.
  uint64_t constant_args(const flatbuffers::Vector<int32_t>* args) const {
    const size_t count = args == nullptr ? 0 : args->size();
    uint64_t bits = 0;
    for (size_t k = 0; k < count && k < PrepareContext::kMaxConstantArgs; ++k) {
      const int32_t index = args->Get(static_cast<uint32_t>(k));
      if (is_constant_tensor(index) && !delegate_arg_[index]) bits |= uint64_t{1} << k;
    }
    return bits;
  }

  // Refuses a constant tensor at `value` (or among the items of a tensor
  // list there), which a kernel writes, and marks the values written.
  Status check_writable(int32_t value, const char* op, size_t position) {
    TL_CHECK_OR_RETURN(!is_constant_tensor(value), Error::kInvalidProgram,
                       "argument %zu of '%s' is constant tensor value %d, but the kernel writes "
                       "that argument",
                       position, op, value);
    kernel_written_[value] = true;
    const fb::EValue* list = value_of_type(value, fb::KernelTypes::TensorList);
    if (list == nullptr) list = value_of_type(value, fb::KernelTypes::OptionalTensorList);
    if (list == nullptr) return Error::kOk;
    const auto* items = list->val_type() == fb::KernelTypes::TensorList
                            ? list->val_as_TensorList()->items()
                            : list->val_as_OptionalTensorList()->items();
    if (items == nullptr) return Error::kOk;
    for (int32_t item : *items) {
      if (item < 0) continue;  // None in an optional list; parse_values checked the rest.
      TL_CHECK_OR_RETURN(!is_constant_tensor(item), Error::kInvalidProgram,
                         "argument %zu of '%s' is a list holding constant tensor value %d, but "
                         "the kernel writes that argument",
                         position, op, item);
      kernel_written_[item] = true;
    }
    return Error::kOk;
  }

  // The arguments `kernel` writes (its schema's out arguments, return slot
  // and Tensor(a!) inputs) must not hold constants: a constant may be a
  // read-only mapping of the file.
  Status check_written_args(const Kernel& kernel, const char* op,
                            const flatbuffers::Vector<int32_t>* args) {
    const size_t count = args == nullptr ? 0 : args->size();
    for (size_t k = 0; k < count; ++k) {
      if (!writes_arg(*kernel.schema, k)) continue;
      TL_RETURN_IF_ERROR(check_writable(args->Get(static_cast<uint32_t>(k)), op, k));
    }
    return Error::kOk;
  }

  // Checks the call against the kernel's schema, then lets the kernel
  // prepare it: everything that does not change between runs fails here,
  // at load, with the operator and argument named.
  Status prepare_call(const Kernel& kernel, ResolvedInstruction* out,
                      const flatbuffers::Vector<int32_t>* args) {
    Status checked = check_call(out->args, *kernel.schema);
    if (!checked.ok()) return checked.with_context("'%s' (schema %s)", out->name, kernel.schema->text);
    TL_RETURN_IF_ERROR(check_written_args(kernel, out->name, args));
    TL_RETURN_IF_ERROR(check_written_types(*kernel.schema, out->name, args));
    PreparedCall call;
    Status prepared = prepare_kernel_call(kernel, out->args, memory_->method_allocator, &call,
                                          constant_args(args));
    if (!prepared.ok()) return prepared.with_context("'%s'", out->name);
    out->kernel = call.eval;
    out->state = call.state;
    if (call.scratch_bytes > scratch_bytes_) scratch_bytes_ = call.scratch_bytes;
    return Error::kOk;
  }

  static bool is_tensor_or_list(const EValue& v) {
    return v.is_tensor() || v.is_tensor_list() || v.is_optional_tensor_list();
  }

  // A kernel replaces the whole value at a position it writes: an out
  // variant's return slot gets a copy of its out tensor, a size op's slot an
  // Int. So a written value must be of a kind the kernel writes, and one
  // whose kind may change must not be read elsewhere in the same call (a
  // fuzzed program gave view_copy its size list as the return slot; the
  // list became a Tensor, and the kernel then read it as a list).
  Status check_written_types(const OpSchema& schema, const char* op,
                             const flatbuffers::Vector<int32_t>* args) const {
    const size_t count = args == nullptr ? 0 : args->size();
    // An out variant (it writes a tensor argument) copies a tensor into its
    // return slot; only an op writing its return slot alone (a size or
    // scalar op, et_view) or the slot upstream appends to an op returning
    // nothing may hold a scalar there.
    bool writes_tensor_args = false;
    for (size_t k = 0; k < schema.num_args; ++k) {
      writes_tensor_args |= schema.args[k].written && schema.args[k].type != ArgType::kReturn;
    }
    for (size_t k = 0; k < count; ++k) {
      if (!writes_arg(schema, k)) continue;
      const int32_t index = args->Get(static_cast<uint32_t>(k));
      const EValue& value = method_.values_[index];
      const bool is_return_slot = k >= schema.num_args || schema.args[k].type == ArgType::kReturn;
      const bool tensors_only =
          !is_return_slot || (writes_tensor_args && !schema.returns_nothing);
      const bool allowed = tensors_only ? is_tensor_or_list(value)
                                        : !(value.is_int_list() || value.is_double_list() ||
                                            value.is_bool_list() || value.is_string());
      TL_CHECK_OR_RETURN(allowed, Error::kInvalidProgram,
                         "argument %zu of '%s' is %s value %d, but the kernel writes %s there", k,
                         op, to_string(value.tag()), index,
                         tensors_only ? "a tensor" : "a scalar or a tensor");
      if (value.is_tensor()) {
        // Stays a tensor, so other positions may read it; but an out
        // variant's set_return makes the slot its out (the argument before
        // it), and kernels prepared for the slot's dtype must not then read
        // out's elements as theirs (a fuzzed sum.IntList_out returned its
        // bool out into a float tensor that gt.Scalar_out read next).
        const int32_t out_index = k > 0 ? args->Get(static_cast<uint32_t>(k - 1)) : -1;
        const bool receives_out = is_return_slot && writes_tensor_args && k > 0 &&
                                  writes_arg(schema, k - 1) &&
                                  method_.values_[out_index].is_tensor();
        TL_CHECK_OR_RETURN(
            !receives_out ||
                method_.values_[out_index].to_tensor().scalar_type() ==
                    value.to_tensor().scalar_type(),
            Error::kInvalidProgram,
            "the return slot of '%s' (argument %zu) is %s tensor value %d, but the kernel "
            "returns its out there, %s tensor value %d",
            op, k, to_string(value.to_tensor().scalar_type()), index,
            receives_out ? to_string(method_.values_[out_index].to_tensor().scalar_type()) : "",
            out_index);
        continue;
      }
      for (size_t j = 0; j < count; ++j) {
        TL_CHECK_OR_RETURN(writes_arg(schema, j) || args->Get(static_cast<uint32_t>(j)) != index,
                           Error::kInvalidProgram,
                           "argument %zu of '%s' reads %s value %d, which the kernel overwrites "
                           "as argument %zu",
                           j, op, to_string(value.tag()), index, k);
      }
    }
    return Error::kOk;
  }

  // A MoveCall makes its destination the source's tensor. Moving a constant
  // where a kernel writes (or onward, through another move) would let that
  // kernel write the constant, so it is refused once every instruction is
  // known.
  Status check_constant_moves() const {
    for (size_t i = 0; i < method_.num_instructions_; ++i) {
      const ResolvedInstruction& move = method_.instructions_[i];
      if (move.kind != ResolvedInstruction::Kind::kMove || !is_constant_tensor(move.a)) continue;
      TL_CHECK_OR_RETURN(!kernel_written_[move.b] && !move_source_[move.b], Error::kInvalidProgram,
                         "instruction %zu moves constant tensor value %u into value %u, which %s",
                         i, move.a, move.b,
                         kernel_written_[move.b] ? "a kernel writes" : "is moved on");
    }
    return Error::kOk;
  }

  // Kernels were prepared for the kinds and dtypes values have at load, so a
  // MoveCall may not turn a value into another kind (or a tensor of another
  // dtype).
  Status check_move_keeps_kind(int32_t from, int32_t to) const {
    const EValue& source = method_.values_[from];
    const EValue& destination = method_.values_[to];
    TL_CHECK_OR_RETURN(source.tag() == destination.tag(), Error::kInvalidProgram,
                       "move from value %d (%s) into value %d (%s) would change the value's kind",
                       from, to_string(source.tag()), to, to_string(destination.tag()));
    if (source.is_tensor()) {
      const ScalarType a = source.to_tensor().scalar_type();
      const ScalarType b = destination.to_tensor().scalar_type();
      TL_CHECK_OR_RETURN(a == b, Error::kInvalidProgram,
                         "move from value %d (%s tensor) into value %d (%s tensor) would change "
                         "the value's dtype",
                         from, to_string(a), to, to_string(b));
    }
    return Error::kOk;
  }

  Status check_value_index(int32_t index, const char* what) const {
    TL_CHECK_OR_RETURN(index >= 0 && static_cast<size_t>(index) < method_.num_values_,
                       Error::kInvalidProgram, "%s value %d is out of range (%zu values)", what,
                       index, method_.num_values_);
    return Error::kOk;
  }

  Status resolve_instruction(const fb::Instruction* instruction, ResolvedInstruction* out,
                             MissingOperators* missing) {
    using Kind = ResolvedInstruction::Kind;
    TL_CHECK_OR_RETURN(instruction->instr_args_type() == fb::InstructionArguments::NONE ||
                           instruction->instr_args() != nullptr,
                       Error::kInvalidProgram, "instruction is a %s with no arguments table",
                       fb::EnumNameInstructionArguments(instruction->instr_args_type()));
    switch (instruction->instr_args_type()) {
      case fb::InstructionArguments::KernelCall: {
        const fb::KernelCall* call = instruction->instr_args_as_KernelCall();
        const int32_t op = call->op_index();
        TL_CHECK_OR_RETURN(op >= 0 && static_cast<size_t>(op) < num_operators_, Error::kInvalidProgram,
                           "operator index %d is out of range (%zu operators)", op, num_operators_);
        out->kind = Kind::kKernel;
        out->name = operator_names_[op];
        TL_ASSIGN_OR_RETURN(out->args, resolve_args(call->args()));
        TensorArgMeta metas[kMaxKeyedArgs];
        const size_t num_metas = describe_args(out->args, metas, kMaxKeyedArgs);
        Result<const Kernel*> kernel = kernels_.resolve(out->name, {metas, num_metas});
        if (kernel.ok()) {
          TL_RETURN_IF_ERROR(prepare_call(*kernel.get(), out, call->args()));
        } else {
          missing->add(out->name, kernels_.has_kernel(out->name) ? " (not for these dtypes)" : "");
        }
        return Error::kOk;
      }
      case fb::InstructionArguments::DelegateCall: {
        const fb::DelegateCall* call = instruction->instr_args_as_DelegateCall();
        const int32_t index = call->delegate_index();
        TL_CHECK_OR_RETURN(index >= 0 && static_cast<size_t>(index) < method_.num_delegates_,
                           Error::kInvalidProgram, "delegate index %d is out of range (%zu delegates)",
                           index, method_.num_delegates_);
        out->kind = Kind::kDelegate;
        out->delegate_index = static_cast<uint32_t>(index);
        out->name = method_.delegates_[index].name;
        TL_ASSIGN_OR_RETURN(out->args, resolve_args(call->args()));
        return Error::kOk;
      }
      case fb::InstructionArguments::MoveCall: {
        const fb::MoveCall* call = instruction->instr_args_as_MoveCall();
        TL_RETURN_IF_ERROR(check_value_index(call->move_from(), "move source"));
        TL_RETURN_IF_ERROR(check_value_index(call->move_to(), "move destination"));
        TL_CHECK_OR_RETURN(!is_constant_tensor(call->move_to()), Error::kInvalidProgram,
                           "move destination value %d is a constant tensor", call->move_to());
        TL_RETURN_IF_ERROR(check_move_keeps_kind(call->move_from(), call->move_to()));
        move_source_[call->move_from()] = true;
        *out = ResolvedInstruction();
        out->kind = Kind::kMove;
        out->name = "move";
        out->a = static_cast<uint32_t>(call->move_from());
        out->b = static_cast<uint32_t>(call->move_to());
        return Error::kOk;
      }
      case fb::InstructionArguments::JumpFalseCall: {
        const fb::JumpFalseCall* call = instruction->instr_args_as_JumpFalseCall();
        TL_RETURN_IF_ERROR(check_value_index(call->cond_value_index(), "jump condition"));
        const int32_t destination = call->destination_instruction();
        TL_CHECK_OR_RETURN(destination >= 0 && static_cast<size_t>(destination) <= method_.num_instructions_,
                           Error::kInvalidProgram, "jump destination %d is out of range (%zu instructions)",
                           destination, method_.num_instructions_);
        // A Bool, or a Bool tensor (torch.cond's predicate, as a kernel computed it).
        const EValue& condition = method_.values_[call->cond_value_index()];
        const bool is_bool_tensor =
            condition.is_tensor() && condition.to_tensor().scalar_type() == ScalarType::kBool;
        TL_CHECK_OR_RETURN(condition.is_bool() || is_bool_tensor, Error::kInvalidProgram,
                           "jump condition value %d is %s%s; expected Bool or a Bool tensor",
                           call->cond_value_index(),
                           condition.is_tensor() ? to_string(condition.to_tensor().scalar_type())
                                                 : to_string(condition.tag()),
                           condition.is_tensor() ? " tensor" : "");
        *out = ResolvedInstruction();
        out->kind = Kind::kJumpFalse;
        out->name = "jump_false";
        out->a = static_cast<uint32_t>(call->cond_value_index());
        out->b = static_cast<uint32_t>(destination);
        return Error::kOk;
      }
      case fb::InstructionArguments::FreeCall: {
        const fb::FreeCall* call = instruction->instr_args_as_FreeCall();
        TL_RETURN_IF_ERROR(check_value_index(call->value_index(), "freed"));
        TL_CHECK_OR_RETURN(method_.values_[call->value_index()].is_tensor(), Error::kInvalidProgram,
                           "free of value %d, which is not a tensor", call->value_index());
        // Only memory the caller lends can be given up; planned and constant
        // storage is needed again by the next execute.
        const fb::Tensor* spec =
            value_of_type(call->value_index(), fb::KernelTypes::Tensor)->val_as_Tensor();
        TL_CHECK_OR_RETURN(spec->allocation_info() == nullptr && spec->data_buffer_idx() == 0,
                           Error::kInvalidProgram,
                           "free of value %d, which has %s storage; only tensors bound by the "
                           "caller (unplanned inputs, unbound tensors) can be freed",
                           call->value_index(),
                           spec->allocation_info() != nullptr ? "planned" : "constant");
        *out = ResolvedInstruction();
        out->kind = Kind::kFree;
        out->name = "free";
        out->a = static_cast<uint32_t>(call->value_index());
        for (size_t k = 0; k < method_.num_inputs_; ++k) {
          if (method_.input_indices_[k] == call->value_index()) out->b = static_cast<uint32_t>(k + 1);
        }
        return Error::kOk;
      }
      case fb::InstructionArguments::NONE:
        break;
    }
    return Status::error(Error::kInvalidProgram, "instruction has unknown kind %d",
                         static_cast<int>(instruction->instr_args_type()));
  }

  const Program& program_;
  const fb::ExecutionPlan* plan_;
  MemoryManager* memory_;
  const KernelRegistry& kernels_;
  const BackendRegistry* backends_;
  Method method_;
  const char* method_name_ = "";
  const char** operator_names_ = nullptr;
  size_t num_operators_ = 0;
  bool* kernel_written_ = nullptr;  // Per value: some kernel writes it.
  bool* move_source_ = nullptr;     // Per value: some MoveCall reads it.
  bool* delegate_arg_ = nullptr;    // Per value: some DelegateCall receives it.
  size_t scratch_bytes_ = 0;        // The most any prepared call asked for.
  // Arguments past this many are not described to kernel keys (no key
  // names them: KernelKey positions are uint8_t, and schemas stay shorter).
  static constexpr size_t kMaxKeyedArgs = 32;
  static constexpr size_t kScratchAlignment = 64;  // A cache line; enough for AVX-512 loads.
};

Result<Method> load_method_from_plan(const Program& program, const fb::ExecutionPlan* plan,
                                     MemoryManager* memory_manager, const KernelRegistry& kernels,
                                     const BackendRegistry* backends, EventTracer* event_tracer) {
  MethodLoader loader(program, plan, memory_manager, kernels, backends, event_tracer);
  return loader.load();
}

}  // namespace torchlight
