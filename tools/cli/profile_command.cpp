#include "tools/cli/profile_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "tools/cli/cli_report.h"
#include "tools/cli/etdump_capture.h"
#include "tools/cli/profile_table.h"
#include "tools/cli/run_command.h"
#include "tools/cli/timing.h"

namespace torchlight {
namespace cli {
namespace {

constexpr int64_t kMaxThreads = 1024;

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", value);
  return text;
}

void print_summary(const ProfileTable& table, const RunTimes& times) {
  std::fputs(format_profile_table(table).c_str(), stdout);
  std::printf("%-9s %s  (program %s, method %s)\n", "load",
              ms(times.program_ms + times.method_ms).c_str(), ms(times.program_ms).c_str(),
              ms(times.method_ms).c_str());
  const LatencyStats stats = summarize_latency(table.execute_ms);
  double sum = 0;
  for (double v : table.execute_ms) sum += v;
  const double avg = table.execute_ms.empty() ? 0 : sum / static_cast<double>(table.execute_ms.size());
  std::printf("%-9s median %s, avg %s, min %s, max %s  (%zu %s, Method::execute)\n", "execute",
              ms(stats.median_ms).c_str(), ms(avg).c_str(), ms(stats.min_ms).c_str(),
              ms(stats.max_ms).c_str(), stats.runs, stats.runs == 1 ? "run" : "runs");
  std::printf("%-9s %s for %zu %s\n", "total", ms(sum).c_str(), stats.runs,
              stats.runs == 1 ? "run" : "runs");
}

}  // namespace

const char* profile_usage() {
  return "usage: torchlight profile MODEL.pte [options]\n"
         "\n"
         "Runs one method with an ETDump tracer attached and prints, per operator,\n"
         "the calls per run and the p50/avg/min/max time of one call in ms, and its\n"
         "share of the total execute time. A DELEGATE_CALL's own events (one per\n"
         "XNNPACK operator) are listed, indented, under it. Then the load time and\n"
         "the Method::execute time per run.\n"
         "\n"
         "options:\n"
         "  --repeat N           runs to record (default 1)\n"
         "  --threads N          worker threads (default: one per core)\n"
         "  --method NAME        method to run (default: forward, else the first)\n"
         "  --input FILE.npy     one per method input, in order (as run takes them)\n"
         "  --fill MODE          without --input: zeros, ones or random (default)\n"
         "  --seed S             seed of --fill random (default 0)\n"
         "  --load-mode MODE     file, mmap (default) or mlock\n"
         "  --etdump FILE.etdp   also write the trace\n"
         "  --etdump-events N    room for N events (default: sized from the program)\n"
         "  -h, --help           show this help\n";
}

int profile_command(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.push_back({"threads"});
  specs.push_back({"etdump"});
  specs.push_back({"etdump-events"});
  ArgParser parser("profile", specs);
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(profile_usage(), stdout);
    return 0;
  }
  Result<RunOptions> options = parse_run_options(parser, "profile");
  if (!options.ok()) return report_error("", options.status());
  if (parser.has("threads")) {
    Result<int64_t> threads =
        parse_int_option("threads", parser.value("threads", ""), 1, kMaxThreads);
    if (!threads.ok()) return report_error("", threads.status());
    threadpool::set_num_threads(static_cast<size_t>(threads.get()));
  }
  Result<EtdumpCaptureOptions> capture_options = parse_etdump_options(parser);
  if (!capture_options.ok()) return report_error("", capture_options.status());
  EtdumpCapture capture(capture_options.get());
  RunHooks hooks;
  hooks.tracer = &capture.tracer();
  hooks.print_outputs = false;
  const int64_t repeat = options->repeat;
  hooks.on_program_loaded = [&](const MethodMeta& meta) { return capture.size_for(meta, repeat); };
  hooks.on_done = [&](Method&, const RunTimes& times) {
    Status complete = capture.check_complete();
    if (!complete.ok()) return complete;
    print_summary(build_profile_table(capture.tracer().records()), times);
    return capture.write();
  };
  return run_program(options.get(), hooks);
}

}  // namespace cli
}  // namespace torchlight
