#include "devtools/bundled_program/bundled_runner.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "extension/data_loader/buffer_data_loader.h"

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

Result<std::unique_ptr<BundledRunner>> BundledRunner::open(AlignedBytes file, std::string name,
                                                           const KernelRegistry& kernels,
                                                           const BackendRegistry* backends) {
  std::unique_ptr<BundledRunner> runner(new BundledRunner(std::move(file), std::move(name)));
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
  runner->module_ = std::make_unique<Module>(
      std::make_unique<BufferDataLoader>(program.data(), program.size(), loader_name.c_str()),
      kernels, backends);
  TL_RETURN_IF_ERROR(runner->module_->load());
  return runner;
}

Result<CaseReport> BundledRunner::run_case(std::string_view method_name, size_t index,
                                           double rtol, double atol) {
  Result<Method*> m = module_->method(method_name);
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
