#include "tools/cli/profile_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

namespace torchlight {
namespace cli {
namespace {

using etdump::EtdumpRecord;
using etdump::RecordKind;

double span_ms(const EtdumpRecord& r) {
  const uint64_t start = r.span.start_time;
  const uint64_t end = r.span.end_time;
  return end >= start ? static_cast<double>(end - start) / 1e6 : 0.0;
}

bool named(const EtdumpRecord& r, const char* name) {
  return r.name != nullptr && std::strcmp(r.name, name) == 0;
}

// Linear interpolation between closest ranks, as numpy's default.
double percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

void finish_row(ProfileRow& row, size_t runs, double execute_total_ms) {
  const auto& s = row.samples_ms;
  if (s.empty()) return;
  row.calls_per_run = runs > 0 ? static_cast<double>(s.size()) / static_cast<double>(runs) : 0;
  row.total_ms = 0;
  for (double v : s) row.total_ms += v;
  row.avg_ms = row.total_ms / static_cast<double>(s.size());
  row.min_ms = *std::min_element(s.begin(), s.end());
  row.max_ms = *std::max_element(s.begin(), s.end());
  row.p50_ms = percentile(s, 0.5);
  row.percent = execute_total_ms > 0 ? 100.0 * row.total_ms / execute_total_ms : 0;
}

}  // namespace

ProfileTable build_profile_table(Span<const EtdumpRecord> records) {
  ProfileTable table;
  // Top-level rows by key; a delegate call's own events by (instruction, id).
  std::vector<ProfileRow> top;
  std::map<std::string, size_t> top_index;
  struct Child {
    int32_t instruction;
    ProfileRow row;
  };
  std::vector<Child> children;
  std::map<std::pair<int32_t, std::string>, size_t> child_index;
  bool in_execute = false;
  for (const EtdumpRecord& r : records) {
    if (r.kind == RecordKind::kBlock) {
      in_execute = named(r, "Execute");
      if (in_execute) ++table.runs;
      continue;
    }
    if (r.kind != RecordKind::kProfile) continue;
    if (!in_execute) {
      if (named(r, "Program::load_method")) table.load_ms += span_ms(r);
      continue;
    }
    if (named(r, "Method::execute")) {
      table.execute_ms.push_back(span_ms(r));
      continue;
    }
    const bool is_delegate_event = r.delegate_id_str != nullptr || r.delegate_id_int != -1;
    if (is_delegate_event) {
      const std::string id = r.delegate_id_str != nullptr ? r.delegate_id_str
                                                          : std::to_string(r.delegate_id_int);
      auto key = std::make_pair(r.instruction_id, id);
      auto [it, inserted] = child_index.emplace(key, children.size());
      if (inserted) {
        Child child{r.instruction_id, ProfileRow()};
        child.row.name = id;
        child.row.depth = 1;
        children.push_back(child);
      }
      children[it->second].row.samples_ms.push_back(span_ms(r));
      continue;
    }
    std::string key;
    if (r.native_call) {
      key = r.name;
    } else if (named(r, "DELEGATE_CALL")) {
      key = std::string("DELEGATE_CALL ") +
            (r.instruction_name != nullptr ? r.instruction_name : "") + " @" +
            std::to_string(r.instruction_id);
    } else {
      key = r.name != nullptr ? r.name : "?";
    }
    auto [it, inserted] = top_index.emplace(key, top.size());
    if (inserted) {
      top.emplace_back();
      top.back().name = key;
    }
    top[it->second].samples_ms.push_back(span_ms(r));
  }
  double execute_total = 0;
  for (double v : table.execute_ms) execute_total += v;
  for (ProfileRow& row : top) finish_row(row, table.runs, execute_total);
  for (Child& c : children) finish_row(c.row, table.runs, execute_total);
  std::stable_sort(top.begin(), top.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.total_ms > b.total_ms;
  });
  for (ProfileRow& row : top) {
    const std::string prefix = "DELEGATE_CALL ";
    table.rows.push_back(row);
    if (row.name.compare(0, prefix.size(), prefix) != 0) continue;
    const int32_t instruction = std::stoi(row.name.substr(row.name.rfind('@') + 1));
    for (Child& c : children) {
      if (c.instruction == instruction) table.rows.push_back(c.row);
    }
  }
  return table;
}

std::string format_profile_table(const ProfileTable& table) {
  size_t width = 8;
  for (const ProfileRow& row : table.rows) width = std::max(width, row.name.size() + 2 * row.depth);
  width = std::min<size_t>(width, 60);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s %7s %9s %9s %9s %9s %7s\n", static_cast<int>(width),
                "operator", "count", "p50 ms", "avg ms", "min ms", "max ms", "% exec");
  out += line;
  for (const ProfileRow& row : table.rows) {
    std::string name = std::string(2 * row.depth, ' ') + row.name;
    if (name.size() > width) name = name.substr(0, width - 3) + "...";
    std::snprintf(line, sizeof(line), "%-*s %7.4g %9.4f %9.4f %9.4f %9.4f %6.1f%%\n",
                  static_cast<int>(width), name.c_str(), row.calls_per_run, row.p50_ms, row.avg_ms,
                  row.min_ms, row.max_ms, row.percent);
    out += line;
  }
  return out;
}

}  // namespace cli
}  // namespace torchlight
