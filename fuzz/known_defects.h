// Skips inputs that hit a known defect whose fix another change owns (see
// crashes/README.md), so a campaign explores past it instead of stopping at
// the same report again. Set TORCHLIGHT_FUZZ_KNOWN=1 to skip nothing (to
// check a fix); delete each check when its fix is merged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "schema/program_generated.h"

namespace torchlight {
namespace fuzz {

/// True when `data` is a .pte with an EValue or Instruction whose union
/// names a kind but has no table (crashes/method_meta/null_tensor_union_value.pte).
inline bool hits_known_defect(const uint8_t* data, size_t size) {
  static const bool check_all = std::getenv("TORCHLIGHT_FUZZ_KNOWN") != nullptr;
  if (check_all) return false;
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyProgramBuffer(verifier)) return false;  // The runtime rejects it too.
  const fb::Program* program = fb::GetProgram(data);
  if (program->execution_plan() == nullptr) return false;
  for (const fb::ExecutionPlan* plan : *program->execution_plan()) {
    if (plan == nullptr) continue;
    if (plan->values() != nullptr) {
      for (const fb::EValue* value : *plan->values()) {
        if (value != nullptr && value->val_type() != fb::KernelTypes::NONE &&
            value->val() == nullptr) {
          return true;
        }
      }
    }
    if (plan->chains() == nullptr) continue;
    for (const fb::Chain* chain : *plan->chains()) {
      if (chain == nullptr || chain->instructions() == nullptr) continue;
      for (const fb::Instruction* instruction : *chain->instructions()) {
        if (instruction != nullptr &&
            instruction->instr_args_type() != fb::InstructionArguments::NONE &&
            instruction->instr_args() == nullptr) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace fuzz
}  // namespace torchlight
