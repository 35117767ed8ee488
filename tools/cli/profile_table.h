// ProfileTable: the per-operator summary `torchlight profile` prints, built
// from an ETDump trace's records (one load, then one block per run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devtools/etdump/etdump_record.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace cli {

struct ProfileRow {
  std::string name;  // Operator, "DELEGATE_CALL <backend> @<instruction>", or a delegate event id.
  int depth = 0;     // 1: a delegate's own event, listed under its DELEGATE_CALL.
  std::vector<double> samples_ms;  // One per call.
  double calls_per_run = 0;
  double p50_ms = 0, avg_ms = 0, min_ms = 0, max_ms = 0;
  double total_ms = 0;       // Over all runs.
  double percent = 0;        // Of the total execute time.
};

struct ProfileTable {
  std::vector<ProfileRow> rows;  // Top level by total time, each delegate's events after it.
  size_t runs = 0;
  double load_ms = 0;                // Program::load_method (the method load).
  std::vector<double> execute_ms;    // Method::execute, one per run.
};

/// Summarises `records` (as EtdumpGen::records() gives them).
ProfileTable build_profile_table(Span<const etdump::EtdumpRecord> records);

/// The table as text, one row per line, with a header.
std::string format_profile_table(const ProfileTable& table);

}  // namespace cli
}  // namespace torchlight
