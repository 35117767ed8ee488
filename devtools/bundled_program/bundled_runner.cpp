#include "devtools/bundled_program/bundled_runner.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "extension/data_loader/buffer_data_loader.h"
#include "extension/memory/malloc_allocator.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/program.h"

#include <unistd.h>

namespace torchlight {
namespace bundled {
namespace {

constexpr size_t kAlignment = 64;  // Covers the program's 32 and vectorised kernels.

uint8_t* aligned_block(size_t size) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  return static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded));
}

int len(std::string_view s) { return static_cast<int>(s.size()); }

}  // namespace

Result<AlignedBytes> AlignedBytes::copy_of(Span<const uint8_t> bytes) {
  AlignedBytes out;
  out.data_.reset(aligned_block(bytes.size()));
  TL_CHECK_OR_RETURN(out.data_ != nullptr, Error::kMemoryAllocationFailed,
                     "cannot allocate %zu bytes", bytes.size());
  if (!bytes.empty()) std::memcpy(out.data_.get(), bytes.data(), bytes.size());
  out.size_ = bytes.size();
  return out;
}

Result<AlignedBytes> AlignedBytes::read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  TL_CHECK_OR_RETURN(f != nullptr, errno == ENOENT ? Error::kNotFound : Error::kAccessFailed,
                     "%s: cannot open: %s", path.c_str(), std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  TL_CHECK_OR_RETURN(std::fseek(f, 0, SEEK_END) == 0, Error::kAccessFailed,
                     "%s: cannot seek: %s", path.c_str(), std::strerror(errno));
  const long size = std::ftell(f);
  TL_CHECK_OR_RETURN(size >= 0 && std::fseek(f, 0, SEEK_SET) == 0, Error::kAccessFailed,
                     "%s: cannot find the file size: %s", path.c_str(), std::strerror(errno));
  AlignedBytes out;
  out.data_.reset(aligned_block(static_cast<size_t>(size)));
  TL_CHECK_OR_RETURN(out.data_ != nullptr, Error::kMemoryAllocationFailed,
                     "%s: cannot allocate %ld bytes to read it", path.c_str(), size);
  out.size_ = static_cast<size_t>(size);
  TL_CHECK_OR_RETURN(std::fread(out.data_.get(), 1, out.size_, f) == out.size_,
                     Error::kAccessFailed, "%s: short read", path.c_str());
  return out;
}

uint64_t BundledRunner::physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

struct BundledRunner::LoadedMethod {
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
};

BundledRunner::BundledRunner(AlignedBytes file, std::string name, const KernelRegistry& kernels,
                             const BackendRegistry* backends)
    : file_(std::move(file)),
      name_(std::move(name)),
      kernels_(kernels),
      backends_(backends),
      planned_memory_limit_(physical_memory_bytes()) {}

BundledRunner::~BundledRunner() {
  // Methods borrow the program, which borrows the loader and the bytes.
  methods_.clear();
  program_.reset();
  loader_.reset();
}

Result<std::unique_ptr<BundledRunner>> BundledRunner::open(AlignedBytes file, std::string name,
                                                           const KernelRegistry& kernels,
                                                           const BackendRegistry* backends) {
  std::unique_ptr<BundledRunner> runner(
      new BundledRunner(std::move(file), std::move(name), kernels, backends));
  TL_ASSIGN_OR_RETURN(BundledProgram bundle,
                      BundledProgram::parse(runner->file_.span(), runner->name_.c_str()));
  runner->bundle_ = bundle;
  Span<const uint8_t> program = bundle.program_data();
  if (!bundle.is_program_aligned()) {
    // Another writer may not honour force_align; the loader needs 32.
    TL_ASSIGN_OR_RETURN(runner->program_copy_, AlignedBytes::copy_of(program));
    program = runner->program_copy_.span();
    runner->program_copied_ = true;
  }
  const std::string loader_name = runner->name_ + " (embedded program)";
  runner->loader_ =
      std::make_unique<BufferDataLoader>(program.data(), program.size(), loader_name.c_str());
  Result<Program> loaded = Program::load(runner->loader_.get());
  if (!loaded.ok()) return loaded.status();
  runner->program_ = std::make_unique<Program>(std::move(loaded.get()));
  return runner;
}

Result<Method*> BundledRunner::method(std::string_view name) {
  auto found = methods_.find(name);
  if (found != methods_.end()) return found->second->method.get();
  TL_ASSIGN_OR_RETURN(MethodMeta meta, program_->method_meta(name));
  auto loaded = std::make_unique<LoadedMethod>();
  uint64_t planned_bytes = 0;
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    TL_ASSIGN_OR_RETURN(const int64_t size, meta.planned_buffer_size(i));
    TL_CHECK_OR_RETURN(static_cast<uint64_t>(size) <= planned_memory_limit_ - planned_bytes,
                       Error::kMemoryAllocationFailed,
                       "method '%.*s' asks for %lld bytes in planned arena %zu, over the limit of "
                       "%llu bytes for all its arenas",
                       len(name), name.data(), static_cast<long long>(size), i,
                       static_cast<unsigned long long>(planned_memory_limit_));
    planned_bytes += static_cast<uint64_t>(size);
    uint8_t* bytes = aligned_block(static_cast<size_t>(size));
    TL_CHECK_OR_RETURN(bytes != nullptr, Error::kMemoryAllocationFailed,
                       "cannot allocate planned arena %zu of %lld bytes for method '%.*s'", i,
                       static_cast<long long>(size), len(name), name.data());
    loaded->arena_storage.emplace_back(bytes);
    loaded->arenas.emplace_back(bytes, static_cast<size_t>(size));
  }
  loaded->planned = std::make_unique<PlannedMemory>(
      Span<Span<uint8_t>>(loaded->arenas.data(), loaded->arenas.size()));
  loaded->memory.method_allocator = &loaded->method_allocator;
  loaded->memory.planned_memory = loaded->planned.get();
  loaded->memory.temp_allocator = &loaded->temp_allocator;
  TL_ASSIGN_OR_RETURN(Method m, program_->load_method(name, &loaded->memory, kernels_, backends_));
  loaded->method = std::make_unique<Method>(std::move(m));
  loaded->method->set_max_steps(max_steps_);
  Method* out = loaded->method.get();
  methods_.emplace(std::string(name), std::move(loaded));
  return out;
}

Result<CaseReport> BundledRunner::run_case(std::string_view method_name, size_t index,
                                           double rtol, double atol) {
  Result<Method*> m = method(method_name);
  if (!m.ok()) {
    Status s = m.status();
    return s.with_context("%s: loading method '%.*s'", name_.c_str(), len(method_name),
                          method_name.data());
  }
  TL_RETURN_IF_ERROR(bundle_->load_input(*m.get(), index));
  Status executed = m.get()->execute();
  if (!executed.ok()) {
    return executed.with_context("%s: method '%.*s' test case %zu", name_.c_str(),
                                 len(method_name), method_name.data(), index);
  }
  return bundle_->verify_outputs(*m.get(), index, rtol, atol);
}

}  // namespace bundled
}  // namespace torchlight
