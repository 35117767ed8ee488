#include "extension/module/module.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "extension/data_loader/file_data_loader.h"
#include "extension/data_loader/mmap_data_loader.h"
#include "extension/memory/malloc_allocator.h"
#include "runtime/executor/memory_manager.h"

namespace torchlight {

// Everything one loaded method needs, owned together. Arenas are 64-byte
// aligned so vectorised kernels can use aligned loads on planned tensors.
struct Module::LoadedMethod {
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> arena_storage;
  std::vector<Span<uint8_t>> arenas;
  std::unique_ptr<PlannedMemory> planned;
  MallocAllocator method_allocator;
  MallocAllocator temp_allocator;
  MemoryManager memory;
  std::unique_ptr<Method> method;
  std::vector<bool> input_set;  // [inputs_size]: set since load, by any call.
  size_t planned_bytes = 0;
};

namespace {

// The default planned-memory limit: what the machine has, or no limit where
// the platform cannot say.
size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return SIZE_MAX;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

}  // namespace

Module::Module(std::string path, LoadMode mode, const KernelRegistry& kernels,
               const BackendRegistry* backends, EventTracer* event_tracer)
    : path_(std::move(path)),
      mode_(mode),
      kernels_(&kernels),
      backends_(backends),
      event_tracer_(event_tracer),
      planned_memory_limit_(physical_memory_bytes()) {}

Module::Module(std::unique_ptr<DataLoader> loader, const KernelRegistry& kernels,
               const BackendRegistry* backends, EventTracer* event_tracer)
    : Module(std::string(), LoadMode::kFile, kernels, backends, event_tracer) {
  loader_ = std::move(loader);
  loader_given_ = true;
}

Module::Module(std::string path, LoadMode mode, Result<const KernelRegistry*> kernels,
               const BackendRegistry* backends, EventTracer* event_tracer)
    : path_(std::move(path)),
      mode_(mode),
      kernels_(kernels.ok() ? kernels.get() : nullptr),
      kernels_status_(kernels.ok() ? Status() : kernels.status()),
      backends_(backends),
      event_tracer_(event_tracer),
      planned_memory_limit_(physical_memory_bytes()) {}

Module::~Module() {
  // Methods borrow the program, which borrows the loader: destroy in order.
  methods_.clear();
  program_.reset();
  loader_.reset();
}

Status Module::load(Program::Verification verification) {
  if (program_ != nullptr) return Error::kOk;
  if (loader_given_) {
    TL_CHECK_OR_RETURN(loader_ != nullptr, Error::kInvalidArgument,
                       "Module was given a null data loader");
  } else if (mode_ == LoadMode::kFile) {
    TL_ASSIGN_OR_RETURN(FileDataLoader loader, FileDataLoader::from(path_.c_str()));
    loader_ = std::make_unique<FileDataLoader>(std::move(loader));
  } else {
    const auto mlock = mode_ == LoadMode::kMmap ? MmapDataLoader::MlockConfig::kNoMlock
                       : mode_ == LoadMode::kMmapUseMlock
                           ? MmapDataLoader::MlockConfig::kUseMlock
                           : MmapDataLoader::MlockConfig::kUseMlockIgnoreErrors;
    TL_ASSIGN_OR_RETURN(MmapDataLoader loader, MmapDataLoader::from(path_.c_str(), mlock));
    loader_ = std::make_unique<MmapDataLoader>(std::move(loader));
  }
  Result<Program> program = Program::load(loader_.get(), verification);
  if (!program.ok()) {
    if (!loader_given_) loader_.reset();
    return program.status();
  }
  program_ = std::make_unique<Program>(std::move(program.get()));
  return Error::kOk;
}

Result<std::unordered_set<std::string>> Module::method_names() {
  TL_ASSIGN_OR_RETURN(std::vector<std::string> names, ordered_method_names());
  return std::unordered_set<std::string>(names.begin(), names.end());
}

Result<std::vector<std::string>> Module::ordered_method_names() {
  TL_RETURN_IF_ERROR(load());
  std::vector<std::string> names;
  for (size_t i = 0; i < program_->num_methods(); ++i) {
    TL_ASSIGN_OR_RETURN(std::string_view name, program_->method_name(i));
    names.emplace_back(name);
  }
  return names;
}

Result<MethodMeta> Module::method_meta(std::string_view method_name) {
  TL_RETURN_IF_ERROR(load());
  return program_->method_meta(method_name);
}

bool Module::is_method_loaded(std::string_view method_name) const {
  return methods_.find(method_name) != methods_.end();
}

Status Module::load_method(std::string_view method_name) {
  if (is_method_loaded(method_name)) return Error::kOk;
  TL_RETURN_IF_ERROR(load());
  TL_RETURN_IF_ERROR(kernels_status_);
  TL_ASSIGN_OR_RETURN(MethodMeta meta, program_->method_meta(method_name));

  auto loaded = std::make_unique<LoadedMethod>();
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    TL_ASSIGN_OR_RETURN(const int64_t size, meta.planned_buffer_size(i));
    TL_CHECK_OR_RETURN(static_cast<uint64_t>(size) <= planned_memory_limit_ - loaded->planned_bytes,
                       Error::kMemoryAllocationFailed,
                       "method '%.*s' asks for %lld bytes in planned arena %zu, over the limit of "
                       "%zu bytes for all its arenas (Module::set_planned_memory_limit)",
                       static_cast<int>(method_name.size()), method_name.data(),
                       static_cast<long long>(size), i, planned_memory_limit_);
    constexpr size_t kAlignment = 64;
    const size_t rounded = (static_cast<size_t>(size) + kAlignment - 1) / kAlignment * kAlignment;
    auto* bytes = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded));
    TL_CHECK_OR_RETURN(bytes != nullptr, Error::kMemoryAllocationFailed,
                       "cannot allocate planned arena %zu of %lld bytes for method '%.*s'", i,
                       static_cast<long long>(size), static_cast<int>(method_name.size()),
                       method_name.data());
    // Touched now, so the first run (an LLM's prefill: the cold one users
    // wait for) does not take a page fault per 4 KiB of activations and
    // caches; the arenas are sized for the program's largest shapes and most
    // of them is written by then anyway.
    std::memset(bytes, 0, rounded);
    loaded->arena_storage.emplace_back(bytes);
    loaded->arenas.emplace_back(bytes, static_cast<size_t>(size));
    loaded->planned_bytes += static_cast<size_t>(size);
  }
  loaded->planned = std::make_unique<PlannedMemory>(
      Span<Span<uint8_t>>(loaded->arenas.data(), loaded->arenas.size()));
  loaded->memory.method_allocator = &loaded->method_allocator;
  loaded->memory.planned_memory = loaded->planned.get();
  loaded->memory.temp_allocator = &loaded->temp_allocator;

  TL_ASSIGN_OR_RETURN(Method method, program_->load_method(method_name, &loaded->memory, *kernels_,
                                                           backends_, event_tracer_));
  loaded->method = std::make_unique<Method>(std::move(method));
  loaded->method->set_max_steps(max_steps_);
  loaded->input_set.assign(loaded->method->inputs_size(), false);
  methods_.emplace(std::string(method_name), std::move(loaded));
  return Error::kOk;
}

void Module::set_max_steps(uint64_t steps) {
  max_steps_ = steps;
  for (auto& entry : methods_) entry.second->method->set_max_steps(steps);
}

Result<Method*> Module::method(std::string_view method_name) {
  TL_RETURN_IF_ERROR(load_method(method_name));
  return methods_.find(method_name)->second->method.get();
}

size_t Module::planned_bytes(std::string_view method_name) const {
  auto it = methods_.find(method_name);
  return it == methods_.end() ? 0 : it->second->planned_bytes;
}

bool Module::unload_method(std::string_view method_name) {
  auto it = methods_.find(method_name);
  if (it == methods_.end()) return false;
  methods_.erase(it);
  return true;
}

Status Module::set_input(std::string_view method_name, const EValue& input, size_t index) {
  TL_RETURN_IF_ERROR(load_method(method_name));
  LoadedMethod& loaded = *methods_.find(method_name)->second;
  TL_CHECK_OR_RETURN(index < loaded.input_set.size(), Error::kInvalidArgument,
                     "method '%.*s' takes %zu inputs; there is no input %zu",
                     static_cast<int>(method_name.size()), method_name.data(),
                     loaded.input_set.size(), index);
  Status status = loaded.method->set_input(index, input);
  if (!status.ok()) {
    return status.with_context("input %zu of method '%.*s'", index,
                               static_cast<int>(method_name.size()), method_name.data());
  }
  loaded.input_set[index] = true;
  return Error::kOk;
}

Status Module::set_inputs(std::string_view method_name, const std::vector<EValue>& inputs) {
  TL_RETURN_IF_ERROR(load_method(method_name));
  LoadedMethod& loaded = *methods_.find(method_name)->second;
  TL_CHECK_OR_RETURN(inputs.size() <= loaded.input_set.size(), Error::kInvalidArgument,
                     "method '%.*s' takes %zu inputs, %zu were given",
                     static_cast<int>(method_name.size()), method_name.data(),
                     loaded.input_set.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_none()) continue;  // Keeps what set_input put there.
    TL_RETURN_IF_ERROR(set_input(method_name, inputs[i], i));
  }
  return Error::kOk;
}

Status Module::set_output(std::string_view method_name, const EValue& output, size_t index) {
  TL_ASSIGN_OR_RETURN(Method* m, method(method_name));
  TL_CHECK_OR_RETURN(output.is_tensor() && output.to_tensor().defined(), Error::kInvalidArgument,
                     "set_output of method '%.*s': output %zu must be a tensor, not %s",
                     static_cast<int>(method_name.size()), method_name.data(), index,
                     to_string(output.tag()));
  const Tensor tensor = output.to_tensor();
  return m->set_output_data_ptr(index, tensor.mutable_data_ptr(), tensor.nbytes());
}

Result<std::vector<EValue>> Module::execute(std::string_view method_name,
                                            const std::vector<EValue>& inputs) {
  TL_RETURN_IF_ERROR(set_inputs(method_name, inputs));
  LoadedMethod& loaded = *methods_.find(method_name)->second;
  for (size_t i = 0; i < loaded.input_set.size(); ++i) {
    TL_CHECK_OR_RETURN(loaded.input_set[i], Error::kInvalidArgument,
                       "input %zu of method '%.*s' was never set (it takes %zu inputs, %zu were "
                       "given)",
                       i, static_cast<int>(method_name.size()), method_name.data(),
                       loaded.input_set.size(), inputs.size());
  }
  TL_RETURN_IF_ERROR(loaded.method->execute());
  return get_outputs(method_name);
}

Result<EValue> Module::get(std::string_view method_name, const std::vector<EValue>& inputs) {
  TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs, execute(method_name, inputs));
  TL_CHECK_OR_RETURN(!outputs.empty(), Error::kNotFound, "method '%.*s' has no outputs",
                     static_cast<int>(method_name.size()), method_name.data());
  return outputs[0];
}

Result<std::vector<EValue>> Module::get_outputs(std::string_view method_name) {
  auto it = methods_.find(method_name);
  TL_CHECK_OR_RETURN(it != methods_.end(), Error::kInvalidState,
                     "method '%.*s' is not loaded, so it has no outputs",
                     static_cast<int>(method_name.size()), method_name.data());
  const Method* m = it->second->method.get();
  std::vector<EValue> outputs;
  outputs.reserve(m->outputs_size());
  for (size_t i = 0; i < m->outputs_size(); ++i) {
    TL_ASSIGN_OR_RETURN(const EValue* value, m->output(i));
    outputs.push_back(*value);
  }
  return outputs;
}

Result<EValue> Module::get_output(std::string_view method_name, size_t index) {
  TL_ASSIGN_OR_RETURN(std::vector<EValue> outputs, get_outputs(method_name));
  TL_CHECK_OR_RETURN(index < outputs.size(), Error::kInvalidArgument,
                     "method '%.*s' has %zu outputs; there is no output %zu",
                     static_cast<int>(method_name.size()), method_name.data(), outputs.size(),
                     index);
  return outputs[index];
}

}  // namespace torchlight
