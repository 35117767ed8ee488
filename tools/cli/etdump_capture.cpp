#include "tools/cli/etdump_capture.h"

#include <cstdio>
#include <utility>

namespace torchlight {
namespace cli {
namespace {

constexpr int64_t kMaxDebugBytes = int64_t{1} << 40;
constexpr int64_t kMaxEvents = int64_t{1} << 28;
// Side data per record: delegate ids and tensor shapes are short.
constexpr size_t kSideBytesPerRecord = 96;

Status write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::error(Error::kAccessFailed, "%s: cannot open for writing", path.c_str());
  const size_t written = size == 0 ? 0 : std::fwrite(data, 1, size, f);
  const bool closed = std::fclose(f) == 0;
  if (written != size || !closed) {
    return Status::error(Error::kAccessFailed, "%s: write failed after %zu of %zu bytes",
                         path.c_str(), written, size);
  }
  return Error::kOk;
}

}  // namespace

Result<EtdumpCaptureOptions> parse_etdump_options(const ArgParser& parser) {
  EtdumpCaptureOptions options;
  options.path = parser.value("etdump", "");
  if (parser.has("etdump") && options.path.empty()) {
    return Status::error(Error::kInvalidArgument, "--etdump must not be empty");
  }
  if (parser.has("debug-buffer")) {
    TL_ASSIGN_OR_RETURN(int64_t bytes, parse_int_option("debug-buffer",
                                                        parser.value("debug-buffer", ""), 1,
                                                        kMaxDebugBytes));
    options.debug_bytes = static_cast<size_t>(bytes);
  }
  options.debug_path = parser.value("debug-buffer-path", "");
  if (parser.has("debug-buffer-path") && !parser.has("debug-buffer")) {
    return Status::error(Error::kInvalidArgument, "--debug-buffer-path needs --debug-buffer BYTES");
  }
  if (options.debug_path.empty() && !options.path.empty()) options.debug_path = options.path + ".debug";
  if (parser.has("etdump-events")) {
    TL_ASSIGN_OR_RETURN(int64_t events, parse_int_option("etdump-events",
                                                         parser.value("etdump-events", ""), 1,
                                                         kMaxEvents));
    options.events = static_cast<size_t>(events);
  }
  return options;
}

EtdumpCapture::EtdumpCapture(EtdumpCaptureOptions options) : options_(std::move(options)) {}

Status EtdumpCapture::size_for(const MethodMeta& meta, int64_t repeat) {
  size_t events = options_.events;
  if (events == 0) {
    // Per run: each instruction, plus its logged values with a debug
    // buffer; a delegate adds one event per backend operator.
    size_t per_run = 2 * meta.num_instructions() + 64;
    if (options_.debug_bytes > 0) per_run += meta.num_values();
    if (meta.num_backends() > 0) per_run += 4096;
    events = 256 + per_run * static_cast<size_t>(repeat);
    if (events > static_cast<size_t>(kMaxEvents)) events = static_cast<size_t>(kMaxEvents);
  }
  records_.assign(events, etdump::EtdumpRecord());
  side_data_.assign(events * kSideBytesPerRecord, 0);
  gen_.set_storage({records_.data(), records_.size()}, {side_data_.data(), side_data_.size()});
  if (options_.debug_bytes > 0) {
    debug_.assign(options_.debug_bytes, 0);
    gen_.set_debug_buffer({debug_.data(), debug_.size()});
  }
  return Error::kOk;
}

Status EtdumpCapture::check_complete() const {
  if (gen_.events_dropped() == 0) return Error::kOk;
  return Status::error(Error::kOutOfResources,
                       "etdump: storage for %zu events was full and %zu events were dropped "
                       "(rerun with --etdump-events %zu or more)",
                       records_.size(), gen_.events_dropped(),
                       records_.size() + gen_.events_dropped());
}

Status EtdumpCapture::write() {
  if (options_.path.empty()) return check_complete();
  std::vector<uint8_t> out(gen_.serialized_size_bound());
  TL_ASSIGN_OR_RETURN(Span<const uint8_t> bytes, gen_.serialize({out.data(), out.size()}));
  TL_RETURN_IF_ERROR(write_file(options_.path, bytes.data(), bytes.size()));
  std::printf("%-9s %s  (%zu bytes, %zu records)\n", "wrote", options_.path.c_str(), bytes.size(),
              gen_.records_used());
  if (options_.debug_bytes > 0) {
    const Span<const uint8_t> debug = gen_.debug_data();
    TL_RETURN_IF_ERROR(write_file(options_.debug_path, debug.data(), debug.size()));
    std::printf("%-9s %s  (debug buffer, %zu of %zu bytes used)\n", "wrote",
                options_.debug_path.c_str(), debug.size(), debug_.size());
    if (gen_.debug_values_dropped() > 0) {
      return Status::error(Error::kOutOfResources,
                           "etdump: the debug buffer of %zu bytes is too small: %zu values were "
                           "not captured; the run needs %zu bytes (--debug-buffer %zu)",
                           debug_.size(), gen_.debug_values_dropped(), gen_.debug_bytes_needed(),
                           gen_.debug_bytes_needed());
    }
  }
  return check_complete();
}

}  // namespace cli
}  // namespace torchlight
