// torchlight: the command-line tool. Dispatches to one file per subcommand.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/cli/cli_report.h"
#include "tools/cli/inspect_command.h"
#include "tools/cli/llm_command.h"
#include "tools/cli/profile_command.h"
#include "tools/cli/run_command.h"
#include "tools/cli/verify_command.h"

namespace {

const char kUsage[] =
    "usage: torchlight <command> [options]\n"
    "\n"
    "commands:\n"
    "  run MODEL.pte       run a method on .npy or generated inputs; print outputs,\n"
    "                      load time and latency\n"
    "  inspect MODEL.pte   show methods, inputs/outputs, operators, delegates,\n"
    "                      planned memory, segments and constants\n"
    "  llm --model M.pte   generate text with an LLM program: prefill, then decode\n"
    "                      with the KV cache, streaming; --chat for a conversation\n"
    "  profile MODEL.pte   run with a tracer; print per-operator times (ETDump)\n"
    "  verify FILE.bpte    run a bundled program's test cases; compare with the\n"
    "                      expected outputs within its tolerances\n"
    "\n"
    "Run 'torchlight <command> --help' for a command's options. Any failure prints\n"
    "one 'error:' line on stderr and exits with status 1.\n";

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (e.g. `| head`) should end the tool with an error
  // status, not kill it with a signal.
  std::signal(SIGPIPE, SIG_IGN);

  if (argc < 2) {
    return torchlight::cli::report_error("", "no command given (commands: run, inspect, profile, verify, llm; see "
                                             "'torchlight --help')");
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "run") return torchlight::cli::run_command(args);
  if (command == "inspect") return torchlight::cli::inspect_command(args);
  if (command == "llm") return torchlight::cli::llm_command(args);
  if (command == "verify") return torchlight::cli::verify_command(args);
  if (command == "profile") return torchlight::cli::profile_command(args);
  return torchlight::cli::report_error(
      "", "unknown command '" + command + "' (commands: run, inspect, profile, verify, llm; see 'torchlight --help')");
}
