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
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Opens and verifies the program. Errors: kNotFound for a missing file,
  /// and everything Program::load returns.
  Status load(Program::Verification verification = Program::Verification::kInternalConsistency);
  bool is_loaded() const { return program_ != nullptr; }

  Result<std::vector<std::string>> method_names();
  Result<MethodMeta> method_meta(std::string_view method_name);

  /// Loads a method (and the program first if needed). Errors: as
  /// Program::load_method.
  Status load_method(std::string_view method_name);
  bool is_method_loaded(std::string_view method_name) const;

  /// Sets the inputs, runs, and returns the outputs. Output tensors borrow
  /// the method's memory and stay valid until the next execute of the same
  /// method or the Module's destruction. Errors: kInvalidArgument when the
  /// input count is wrong, and whatever set_input / execute return.
  Result<std::vector<EValue>> execute(std::string_view method_name,
                                      const std::vector<EValue>& inputs);
  Result<std::vector<EValue>> forward(const std::vector<EValue>& inputs) {
    return execute("forward", inputs);
  }

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
  std::unique_ptr<Program> program_;
  size_t planned_memory_limit_;
  uint64_t max_steps_ = Method::kDefaultMaxSteps;
  std::map<std::string, std::unique_ptr<LoadedMethod>, std::less<>> methods_;
};

}  // namespace torchlight
