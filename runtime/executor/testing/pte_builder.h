// Test-only: build and mutate .pte files through flatbuffers' object API, so
// a test can state "this field is corrupt" instead of hand-editing bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/program_generated.h"

namespace torchlight::testing {

/// The bytes of a fixture in tests/fixtures/upstream (e.g. "add.pte").
std::vector<uint8_t> read_fixture(const std::string& name);

/// The object form of a .pte file. Aborts the test binary on a bad file,
/// since only known-good inputs are unpacked.
std::unique_ptr<fb::ProgramT> unpack(const std::vector<uint8_t>& pte);

/// Serialises `program`. With `segments` non-empty, or `extended_header`
/// set, writes the eh00 header; segment i is placed at
/// program->segments[i].offset, which this function sets from `segments`
/// (each aligned to `segment_alignment`).
std::vector<uint8_t> pack(fb::ProgramT& program, const std::vector<std::vector<uint8_t>>& segments = {},
                          bool extended_header = false, size_t segment_alignment = 128);

/// Little-endian helpers for patching header fields in place.
void put_u32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value);
void put_u64(std::vector<uint8_t>& bytes, size_t offset, uint64_t value);

// --- Value and instruction builders for hand-made plans --------------------

fb::EValueT tensor_value(fb::ScalarType type, std::vector<int32_t> sizes,
                         int memory_id = 0, uint64_t offset = 0, uint32_t data_buffer_idx = 0,
                         fb::TensorShapeDynamism dynamism = fb::TensorShapeDynamism::STATIC);
fb::EValueT int_value(int64_t v);
fb::EValueT bool_value(bool v);
fb::EValueT double_value(double v);
fb::InstructionT kernel_call(int op_index, std::vector<int32_t> args);
fb::InstructionT delegate_call(int delegate_index, std::vector<int32_t> args);
fb::InstructionT move_call(int from, int to);
fb::InstructionT jump_false_call(int cond, int destination);
fb::InstructionT free_call(int value);
std::unique_ptr<fb::OperatorT> op(const std::string& name, const std::string& overload);

/// A program of one method `name` with these values, inputs, outputs,
/// operators and instructions, and planned arenas of `arena_sizes` bytes.
std::unique_ptr<fb::ProgramT> make_program(const std::string& name, std::vector<fb::EValueT> values,
                                           std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                                           std::vector<std::unique_ptr<fb::OperatorT>> operators,
                                           std::vector<fb::InstructionT> instructions,
                                           std::vector<int64_t> arena_sizes);

}  // namespace torchlight::testing

namespace torchlight::testing {

/// A one-method program ("forward") of two values, [Int 7, X], output 0,
/// and one instruction, where X has union type `value_type` but no value
/// table and the instruction has union type `instruction_type` but no
/// arguments table. NONE keeps that union whole instead (X a Null value,
/// the instruction a MoveCall 0 -> 0). Built with the raw builder: the
/// object API cannot express a union type without its value.
std::vector<uint8_t> program_with_hollow_union(fb::KernelTypes value_type,
                                               fb::InstructionArguments instruction_type);

}  // namespace torchlight::testing
