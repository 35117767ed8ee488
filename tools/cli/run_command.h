// `torchlight run MODEL.pte ...`: runs one method on .npy or generated
// inputs, prints and saves the outputs, and reports load time and latency.
// `torchlight profile` runs programs through the same path (run_program).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "extension/module/module.h"
#include "tools/cli/arg_parser.h"

namespace torchlight {
namespace cli {

enum class Fill { kZeros, kOnes, kRandom };

struct RunOptions {
  std::string model;
  std::string method;  // Empty: "forward", or the only/first method.
  std::vector<std::string> inputs;
  std::string output_dir;  // Empty: write nothing.
  int64_t repeat = 1;
  Fill fill = Fill::kRandom;
  uint64_t seed = 0;
  Module::LoadMode load_mode = Module::LoadMode::kMmap;
  std::string load_mode_name = "mmap";
};

/// Load and run times of one run_program call.
struct RunTimes {
  double program_ms = 0;
  double method_ms = 0;
  std::vector<double> run_ms;  // One per run: execute() only.
};

/// What a command adds to run_program.
struct RunHooks {
  EventTracer* tracer = nullptr;  // Attached from the method load on.
  /// After the program loads, before the method does (e.g. to size storage).
  std::function<Status(const MethodMeta&)> on_program_loaded;
  /// After the last run.
  std::function<Status(Method&, const RunTimes&)> on_done;
  bool print_outputs = true;  // False: no outputs and no latency line.
};

/// The options run and profile share: --method, --input, --repeat, --fill,
/// --seed, --load-mode.
std::vector<OptionSpec> run_option_specs();
/// Reads them (and the one MODEL.pte) from a parsed command line.
Result<RunOptions> parse_run_options(const ArgParser& parser, const char* command);

/// Loads the program and method, prepares the inputs and runs `repeat`
/// times. Returns 0, or prints one `error:` line on stderr and returns 1.
int run_program(const RunOptions& options, RunHooks& hooks);

/// Runs the subcommand on `args` (the words after "run"). Returns 0, or
/// prints one `error:` line on stderr and returns 1.
int run_command(const std::vector<std::string>& args);

/// The text of `torchlight run --help`.
const char* run_usage();

}  // namespace cli
}  // namespace torchlight
