#include "runtime/executor/plan_unions.h"

namespace torchlight {
namespace {

// A Null value carries nothing, so its (empty) table may be absent; every
// other type's table is read when the method loads.
Status check_values(const fb::ExecutionPlan* plan, const char* method, const char* file_name) {
  const auto* values = plan->values();
  if (values == nullptr) return Error::kOk;
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
    const fb::EValue* v = values->Get(i);
    TL_CHECK_OR_RETURN(v != nullptr, Error::kInvalidProgram, "'%s': method '%s': value %u is null",
                       file_name, method, i);
    TL_CHECK_OR_RETURN(v->val_type() == fb::KernelTypes::NONE ||
                           v->val_type() == fb::KernelTypes::Null || v->val() != nullptr,
                       Error::kInvalidProgram,
                       "'%s': method '%s': value %u has type %s but no value data", file_name,
                       method, i, fb::EnumNameKernelTypes(v->val_type()));
  }
  return Error::kOk;
}

Status check_instructions(const fb::ExecutionPlan* plan, const char* method,
                          const char* file_name) {
  const auto* chains = plan->chains();
  if (chains == nullptr) return Error::kOk;
  for (flatbuffers::uoffset_t c = 0; c < chains->size(); ++c) {
    const fb::Chain* chain = chains->Get(c);
    if (chain == nullptr || chain->instructions() == nullptr) continue;
    const auto* instructions = chain->instructions();
    for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i) {
      const fb::Instruction* instruction = instructions->Get(i);
      TL_CHECK_OR_RETURN(instruction != nullptr, Error::kInvalidProgram,
                         "'%s': method '%s': chain %u instruction %u is null", file_name, method,
                         c, i);
      TL_CHECK_OR_RETURN(
          instruction->instr_args_type() == fb::InstructionArguments::NONE ||
              instruction->instr_args() != nullptr,
          Error::kInvalidProgram,
          "'%s': method '%s': chain %u instruction %u is a %s with no arguments table", file_name,
          method, c, i, fb::EnumNameInstructionArguments(instruction->instr_args_type()));
    }
  }
  return Error::kOk;
}

}  // namespace

Status check_union_values(const fb::Program* program, const char* file_name) {
  const auto* plans = program->execution_plan();
  if (plans == nullptr) return Error::kOk;
  for (flatbuffers::uoffset_t p = 0; p < plans->size(); ++p) {
    const fb::ExecutionPlan* plan = plans->Get(p);
    if (plan == nullptr) continue;
    const char* method = plan->name() != nullptr ? plan->name()->c_str() : "?";
    TL_RETURN_IF_ERROR(check_values(plan, method, file_name));
    TL_RETURN_IF_ERROR(check_instructions(plan, method, file_name));
  }
  return Error::kOk;
}

}  // namespace torchlight
