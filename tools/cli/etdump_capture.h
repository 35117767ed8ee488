// EtdumpCapture: the storage behind an EtdumpGen for one CLI run, sized from
// the program, and the writing of the .etdp and debug buffer files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devtools/etdump/etdump_gen.h"
#include "runtime/executor/method_meta.h"
#include "tools/cli/arg_parser.h"

namespace torchlight {
namespace cli {

struct EtdumpCaptureOptions {
  std::string path;         // The .etdp to write; empty: keep in memory only.
  size_t debug_bytes = 0;   // 0: no intermediate outputs.
  std::string debug_path;   // Default: path + ".debug".
  size_t events = 0;        // Record capacity; 0: sized from the program.
};

/// --etdump, --debug-buffer, --debug-buffer-path, --etdump-events.
Result<EtdumpCaptureOptions> parse_etdump_options(const ArgParser& parser);

class EtdumpCapture {
 public:
  explicit EtdumpCapture(EtdumpCaptureOptions options);

  etdump::EtdumpGen& tracer() { return gen_; }

  /// Allocates record storage for loading `meta`'s method and running it
  /// `repeat` times (unless --etdump-events fixed it) and the debug buffer.
  Status size_for(const MethodMeta& meta, int64_t repeat);

  /// Writes the .etdp (and the debug buffer), printing a "wrote" line for
  /// each. Errors: kAccessFailed when a file cannot be written;
  /// kOutOfResources when events or debug values were dropped (the files
  /// are still written, and the message says what size to ask for).
  Status write();

  /// kOutOfResources when storage was full and events were dropped.
  Status check_complete() const;

 private:
  EtdumpCaptureOptions options_;
  std::vector<etdump::EtdumpRecord> records_;
  std::vector<uint8_t> side_data_;
  std::vector<uint8_t> debug_;
  etdump::EtdumpGen gen_;
};

}  // namespace cli
}  // namespace torchlight
