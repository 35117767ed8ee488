// Skips inputs that hit a known defect whose fix another change owns (see
// crashes/README.md), so a campaign explores past it instead of stopping at
// the same report again. Set TORCHLIGHT_FUZZ_KNOWN=1 to skip nothing (to
// check a fix); delete each check when its fix is merged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "schema/program_generated.h"

namespace torchlight {
namespace fuzz {

// Bytes per element of the dtypes kernels store through typed pointers.
inline size_t element_alignment(fb::ScalarType type) {
  switch (type) {
    case fb::ScalarType::SHORT: case fb::ScalarType::HALF: case fb::ScalarType::BFLOAT16:
    case fb::ScalarType::UINT16: case fb::ScalarType::BITS16: return 2;
    case fb::ScalarType::INT: case fb::ScalarType::FLOAT: case fb::ScalarType::UINT32:
    case fb::ScalarType::QINT32: return 4;
    case fb::ScalarType::LONG: case fb::ScalarType::DOUBLE: case fb::ScalarType::UINT64: return 8;
    default: return 1;
  }
}

/// True when `data` is a .pte that hits one of:
/// - an EValue or Instruction whose union names a kind but has no table
///   (crashes/method_meta/null_tensor_union_value.pte);
/// - a planned tensor at an offset that is not a multiple of its element
///   size (crashes/program/misaligned_planned_float.pte);
/// - a planned arena above 64 MiB, which Module allocates unchecked
///   (crashes/llm_metadata/planned_arena_2GiB.pte).
inline bool hits_known_defect(const uint8_t* data, size_t size) {
  static const bool check_all = std::getenv("TORCHLIGHT_FUZZ_KNOWN") != nullptr;
  if (check_all) return false;
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyProgramBuffer(verifier)) return false;  // The runtime rejects it too.
  const fb::Program* program = fb::GetProgram(data);
  if (program->execution_plan() == nullptr) return false;
  for (const fb::ExecutionPlan* plan : *program->execution_plan()) {
    if (plan == nullptr) continue;
    if (plan->non_const_buffer_sizes() != nullptr) {
      // memcpy: the verifier does not check 8-byte element alignment.
      const auto* sizes = plan->non_const_buffer_sizes();
      for (uint32_t i = 0; i < sizes->size(); ++i) {
        int64_t bytes = 0;
        std::memcpy(&bytes, sizes->Data() + i * sizeof(int64_t), sizeof(bytes));
        if (bytes > (int64_t(64) << 20)) return true;
      }
    }
    if (plan->values() != nullptr) {
      for (const fb::EValue* value : *plan->values()) {
        if (value != nullptr && value->val_type() != fb::KernelTypes::NONE &&
            value->val() == nullptr) {
          return true;
        }
        const fb::Tensor* tensor = value != nullptr ? value->val_as_Tensor() : nullptr;
        if (tensor != nullptr && tensor->allocation_info() != nullptr &&
            tensor->allocation_info()->memory_offset_low() %
                    element_alignment(tensor->scalar_type()) != 0) {
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
