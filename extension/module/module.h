// Module: the easy way to run a .pte.
//
//   Module m("model.pte");
//   auto outputs = m.forward({EValue(input.tensor())});
//
// It owns everything the core leaves to the caller: the data loader, the
// Program, and per method the planned arenas (sized from MethodMeta), a
// method allocator and a temp allocator. It uses the heap; the core does not.
//
// Two targets: torchlight_module runs with the registries you pass (for
// example a selective kernel library's table) and links no kernel library;
// torchlight_module_defaults adds the Module("model.pte") form, with every
// kernel library and the XNNPACK backend.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "runtime/backend/backend_registry.h"
#include "runtime/core/data_loader.h"
#include "runtime/core/evalue.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/result.h"
#include "runtime/executor/program.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

class Module {
 public:
  enum class LoadMode {
    kFile,                      // Read the whole file into memory.
    kMmap,                      // Map the file; pages load on demand.
    kMmapUseMlock,              // Map and lock in RAM; failure to lock is an error.
    kMmapUseMlockIgnoreErrors,  // Map and try to lock.
    // Upstream ExecuTorch's spellings.
    File = kFile,
    Mmap = kMmap,
    MmapUseMlock = kMmapUseMlock,
    MmapUseMlockIgnoreErrors = kMmapUseMlockIgnoreErrors,
  };

  /// Every kernel library (all_kernels()) and the default backends
  /// (default_backends(): XnnpackBackend). Defined in the
  /// torchlight_module_defaults target (default_module.cpp): link it for
  /// this form. Nothing is read until the first call that needs the program.
  explicit Module(std::string path, LoadMode mode = LoadMode::kMmap,
                  EventTracer* event_tracer = nullptr);

  /// Exactly `kernels` and `backends` (null: no delegate backends);
  /// `event_tracer` may be null. All must outlive the Module.
  Module(std::string path, LoadMode mode, const KernelRegistry& kernels,
         const BackendRegistry* backends = nullptr, EventTracer* event_tracer = nullptr);
  /// Over a caller's data loader (e.g. a BufferDataLoader on bytes in
  /// memory), as upstream's Module(std::unique_ptr<DataLoader>); path() is
  /// empty and the load mode does not apply.
  Module(std::unique_ptr<DataLoader> loader, const KernelRegistry& kernels,
         const BackendRegistry* backends = nullptr, EventTracer* event_tracer = nullptr);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Opens and verifies the program. Errors: kNotFound for a missing file,
  /// and everything Program::load returns.
  Status load(Program::Verification verification = Program::Verification::kInternalConsistency);
  bool is_loaded() const { return program_ != nullptr; }

  /// The program's method names (upstream's type: a set).
  Result<std::unordered_set<std::string>> method_names();
  /// The same names in the program's order.
  Result<std::vector<std::string>> ordered_method_names();
  Result<MethodMeta> method_meta(std::string_view method_name);

  /// Loads a method (and the program first if needed). Errors: as
  /// Program::load_method.
  Status load_method(std::string_view method_name);
  Status load_forward() { return load_method("forward"); }
  bool is_method_loaded(std::string_view method_name) const;
  /// Frees a loaded method and its memory; false if it was not loaded.
  /// Values it returned before no longer point at valid memory.
  bool unload_method(std::string_view method_name);
  bool unload_forward() { return unload_method("forward"); }

  /// Sets input `index` of a method (loading it if needed); the method
  /// copies the value, so the caller's tensor may change afterwards.
  Status set_input(std::string_view method_name, const EValue& input, size_t index);
  Status set_input(const EValue& input, size_t index) { return set_input("forward", input, index); }
  /// Sets inputs 0..n-1; errors as execute.
  Status set_inputs(std::string_view method_name, const std::vector<EValue>& inputs);
  Status set_inputs(const std::vector<EValue>& inputs) { return set_inputs("forward", inputs); }
  /// Makes output `index` (a tensor) be written into `output`'s memory
  /// instead of the method's planned memory; sizes and dtype must match.
  Status set_output(std::string_view method_name, const EValue& output, size_t index = 0);
  Status set_output(const EValue& output, size_t index = 0) {
    return set_output("forward", output, index);
  }

  /// Sets the given inputs, runs, and returns the outputs. As upstream, fewer
  /// inputs than the method takes (or None in a position) keep those set
  /// before with set_input. Output tensors borrow the method's memory and
  /// stay valid until the next execute of the same method, its unload or
  /// the Module's destruction. Errors: kInvalidArgument for too many inputs
  /// or one never set (naming its index), and whatever set_input / execute
  /// return.
  Result<std::vector<EValue>> execute(std::string_view method_name,
                                      const std::vector<EValue>& inputs);
  Result<std::vector<EValue>> execute(std::string_view method_name, const EValue& input) {
    return execute(method_name, std::vector<EValue>{input});
  }
  Result<std::vector<EValue>> execute(std::string_view method_name) {
    return execute(method_name, std::vector<EValue>{});
  }
  Result<std::vector<EValue>> forward(const std::vector<EValue>& inputs) {
    return execute("forward", inputs);
  }
  Result<std::vector<EValue>> forward(const EValue& input) { return execute("forward", input); }
  Result<std::vector<EValue>> forward() { return execute("forward"); }
  /// execute, returning only the first output.
  Result<EValue> get(std::string_view method_name, const std::vector<EValue>& inputs = {});
  Result<EValue> get(std::string_view method_name, const EValue& input) {
    return get(method_name, std::vector<EValue>{input});
  }

  /// The outputs of the last execute (the method must be loaded).
  Result<std::vector<EValue>> get_outputs(std::string_view method_name = "forward");
  Result<EValue> get_output(std::string_view method_name = "forward", size_t index = 0);

  EventTracer* event_tracer() const { return event_tracer_; }

  /// The loaded Method, loading it if needed; owned by the Module.
  Result<Method*> method(std::string_view method_name);
  /// Null until load() succeeds.
  const Program* program() const { return program_.get(); }
  const std::string& path() const { return path_; }

  /// Bytes of planned arenas allocated for `method_name` (0 if not loaded).
  size_t planned_bytes(std::string_view method_name) const;

  /// The most planned-arena bytes one method may ask for. The sizes come
  /// from the file, so a few bytes could otherwise ask for any amount; a
  /// method over the limit fails to load with kMemoryAllocationFailed.
  /// Default: the machine's physical memory.
  void set_planned_memory_limit(size_t bytes) { planned_memory_limit_ = bytes; }
  size_t planned_memory_limit() const { return planned_memory_limit_; }

  /// The instruction cap of every method this Module loads (a program may
  /// loop through backward jumps; see Method::set_max_steps).
  void set_max_steps(uint64_t steps);

 private:
  struct LoadedMethod;

  // The default form's registry, or why it could not be built (a build bug,
  // reported by load_method rather than lost in a constructor).
  Module(std::string path, LoadMode mode, Result<const KernelRegistry*> kernels,
         const BackendRegistry* backends, EventTracer* event_tracer);

  std::string path_;
  LoadMode mode_;
  const KernelRegistry* kernels_;  // Null when kernels_status_ holds an error.
  Status kernels_status_;
  const BackendRegistry* backends_;
  EventTracer* event_tracer_;
  std::unique_ptr<DataLoader> loader_;
  bool loader_given_ = false;  // By the caller; else opened from path_ by load().
  std::unique_ptr<Program> program_;
  size_t planned_memory_limit_;
  uint64_t max_steps_ = Method::kDefaultMaxSteps;
  std::map<std::string, std::unique_ptr<LoadedMethod>, std::less<>> methods_;
};

}  // namespace torchlight
