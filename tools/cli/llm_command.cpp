#include "tools/cli/llm_command.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "tools/cli/cli_report.h"
#include "tools/cli/llm_chat.h"
#include "tools/cli/llm_options.h"
#include "tools/cli/llm_session.h"
#include "tools/cli/llm_stats.h"
#include "tools/cli/llm_stats_json.h"

namespace torchlight {
namespace cli {

int llm_command(const std::vector<std::string>& args) {
  ArgParser parser("llm", llm_option_specs());
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(llm_usage(), stdout);
    return 0;
  }
  Result<LlmOptions> parsed_options = parse_llm_options(parser);
  if (!parsed_options.ok()) return report_error("", parsed_options.status());
  LlmOptions& options = parsed_options.get();
  if (options.threads > 0) threadpool::set_num_threads(static_cast<size_t>(options.threads));

  Result<Session> loaded = load_session(options);
  if (!loaded.ok()) return report_error("", loaded.status());
  Session& session = loaded.get();

  std::vector<Turn> turns;
  if (options.chat) {
    Status status = chat(session, options, &turns);
    if (!status.ok()) return report_error("", status);
  } else {
    StdoutStream out;
    const bool ids = !options.prompt_tokens.empty();
    if (options.echo && !ids) out.write(options.prompt);
    if (options.echo && ids) {
      for (const int32_t id : options.prompt_tokens) out.write(std::to_string(id) + " ");
    }
    Result<Turn> turn = ids ? run_turn_from_ids(session, options, &out)
                            : run_turn(session, options.prompt, options, /*continue=*/false, &out);
    if (!turn.ok()) {
      out.end_line();
      return report_error("", turn.status());
    }
    out.end_line();
    if (options.print_token_ids) print_token_ids(turn.get());
    if (!options.quiet) {
      std::fprintf(stderr, "%s\n", describe_stop(turn->stats, options.generation).c_str());
    }
    turns.push_back(std::move(turn.get()));
  }

  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    return report_error("", "writing the generated text to stdout failed");
  }
  if (options.stats && !turns.empty()) print_stats(session, turns);
  if (!options.stats_json.empty()) {
    Status written = write_stats_json(options.stats_json, options, session, turns);
    if (!written.ok()) return report_error(options.stats_json, written);
  }
  return 0;
}

}  // namespace cli
}  // namespace torchlight
