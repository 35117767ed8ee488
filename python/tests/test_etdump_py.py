"""ETDump (.etdp) in Python: the dataclasses, the writer and the checked
reader against the wire facts of spec section 1 (devtools-formats.md)."""

from __future__ import annotations

import json
import random
import struct
import subprocess

import pytest

from torchlight.devtools.etdump.schema_flatcc import (
    SCHEMA_PATH, Allocator, AllocationEvent, Bool, DebugEvent, ETDump, Event, Int,
    ProfileEvent, RunData, ScalarType, Tensor, TensorList, Value, ValueType)
from torchlight.devtools.etdump.serialize import (ETDumpParseError, deserialize_from_etdump_flatcc,
                                                  serialize_to_etdump_flatcc)
from torchlight.pte import codegen


def _profile(name, instr, start, end, chain=0, **kw):
    return Event(profile_event=ProfileEvent(name=name, chain_index=chain, instruction_id=instr,
                                            start_time=start, end_time=end, **kw))


def sample_etdump() -> ETDump:
    """Every kind of event the runtime writes (spec 1.3), in one trace."""
    tensor = Value(val=ValueType.Tensor,
                   tensor=Tensor(ScalarType.FLOAT, [2, 2], [2, 1], 64))
    return ETDump(run_data=[
        RunData(name="Default", events=[
            _profile("Method::init", 0, 100, 200, chain=-1),
            _profile("Program::load_method", 0, 90, 230, chain=-1)]),
        RunData(name="Execute", bundled_input_index=3,
                allocators=[Allocator("method"), Allocator("temp")],
                events=[
                    Event(allocation_event=AllocationEvent(allocator_id=1, allocation_size=4096)),
                    _profile("native_call_convolution.out", 0, 426786, 971569),
                    _profile("OPERATOR_CALL", 0, 425624, 972440),
                    Event(profile_event=ProfileEvent(
                        chain_index=0, instruction_id=2, delegate_debug_id_int=7,
                        delegate_debug_metadata=b"\x01\x02\x03", start_time=10, end_time=20)),
                    Event(profile_event=ProfileEvent(
                        chain_index=0, instruction_id=2, delegate_debug_id_str="conv_1",
                        delegate_debug_metadata=b"", start_time=11, end_time=19)),
                    Event(debug_event=DebugEvent(chain_index=0, instruction_id=0,
                                                 debug_entry=tensor)),
                    Event(debug_event=DebugEvent(
                        chain_index=0, instruction_id=1, debug_entry=Value(
                            val=ValueType.TensorList, tensor_list=TensorList([
                                Tensor(ScalarType.LONG, [3], [1], 128),
                                Tensor(ScalarType.INT, [0], [1], -1)])))),
                    Event(debug_event=DebugEvent(
                        chain_index=0, instruction_id=1,
                        debug_entry=Value(val=ValueType.Int, int_value=Int(-5)))),
                    Event(debug_event=DebugEvent(
                        chain_index=2**64 - 1, instruction_id=0, debug_entry=Value(
                            val=ValueType.Tensor, tensor=Tensor(ScalarType.FLOAT, [2, 2], [2, 1], 0),
                            output=Bool(True)))),
                    _profile("Method::execute", 0, 1, 1898822, chain=-1)]),
    ])


@pytest.mark.parametrize("size_prefixed", [False, True])
def test_round_trip(size_prefixed):
    etdump = sample_etdump()
    data = serialize_to_etdump_flatcc(etdump, size_prefixed=size_prefixed)
    assert deserialize_from_etdump_flatcc(data) == etdump  # detects the layout
    assert deserialize_from_etdump_flatcc(data, size_prefixed=size_prefixed) == etdump


def test_size_prefix_layout():
    """Spec 1.5: bytes 0..3 count the rest, root offset at 4, ED00 at 8;
    without the prefix ED00 is at 4."""
    prefixed = serialize_to_etdump_flatcc(sample_etdump(), size_prefixed=True)
    plain = serialize_to_etdump_flatcc(sample_etdump())
    assert struct.unpack_from("<I", prefixed, 0)[0] == len(prefixed) - 4
    assert prefixed[8:12] == b"ED00" and plain[4:8] == b"ED00"
    with pytest.raises(ETDumpParseError, match="identifier"):
        deserialize_from_etdump_flatcc(plain, size_prefixed=True)


def _table_slots(data: bytes, table: int):
    """The vtable slot values of the table at byte `table`."""
    vtable = table - struct.unpack_from("<i", data, table)[0]
    size = struct.unpack_from("<H", data, vtable)[0]
    return list(struct.unpack_from(f"<{(size - 4) // 2}H", data, vtable + 4))


def _uoffset(data: bytes, pos: int) -> int:
    return pos + struct.unpack_from("<I", data, pos)[0]


def _events(data: bytes, base: int = 0):
    """(root slots, [RunData tables], {run index: [Event tables]})."""
    root = _uoffset(data, base)
    root_slots = _table_slots(data, root)
    runs_vec = _uoffset(data, root + root_slots[1])
    runs = [_uoffset(data, runs_vec + 4 + 4 * i)
            for i in range(struct.unpack_from("<I", data, runs_vec)[0])]
    events = {}
    for i, run in enumerate(runs):
        slots = _table_slots(data, run)
        vec = _uoffset(data, run + slots[3])
        events[i] = [_uoffset(data, vec + 4 + 4 * k)
                     for k in range(struct.unpack_from("<I", data, vec)[0])]
    return root_slots, runs, events


def test_default_values_are_left_out():
    """Spec 1.5's vtables: version 0 and bundled_input_index -1 absent,
    chain -1 present but chain 0 absent, offset 0 absent; an allocation
    Event uses slot 1, a debug Event slot 2, a Tensor Value stores 5."""
    data = serialize_to_etdump_flatcc(sample_etdump(), size_prefixed=True)
    root_slots, runs, events = _events(data, 4)
    assert root_slots[0] == 0 and root_slots[1] != 0
    default_slots = _table_slots(data, runs[0])
    assert default_slots[1] == 0 and default_slots[2] == 0  # index -1, no allocators
    assert _table_slots(data, runs[1])[1] != 0  # bundled_input_index 3 is written

    def profile_slots(event):
        return _table_slots(data, _uoffset(data, event + _table_slots(data, event)[0]))

    init_slots = profile_slots(events[0][0])
    assert init_slots[1] != 0  # chain -1
    conv_slots = profile_slots(events[1][1])
    # chain 0 is the default and left out; instruction 0 is not (default -1).
    assert conv_slots[1] == 0 and conv_slots[2] != 0
    alloc_event_slots = _table_slots(data, events[1][0])
    assert alloc_event_slots[:2] == [0, alloc_event_slots[1]] and alloc_event_slots[1] != 0
    debug_event = events[1][5]
    debug_event_slots = _table_slots(data, debug_event)
    assert debug_event_slots[0] == 0 and debug_event_slots[1] == 0 and debug_event_slots[2] != 0
    debug = _uoffset(data, debug_event + debug_event_slots[2])
    value = _uoffset(data, debug + _table_slots(data, debug)[2])
    value_slots = _table_slots(data, value)
    assert data[value + value_slots[0]] == 5
    tensor = _uoffset(data, value + value_slots[1])
    assert _table_slots(data, tensor)[3] != 0  # offset 64 is written
    output_event = events[1][8]
    debug = _uoffset(data, output_event + _table_slots(data, output_event)[2])
    value = _uoffset(data, debug + _table_slots(data, debug)[2])
    tensor = _uoffset(data, value + _table_slots(data, value)[1])
    tensor_slots = _table_slots(data, tensor)
    assert len(tensor_slots) < 4 or tensor_slots[3] == 0  # offset 0 is left out


def _flatc(tmp_path, *args):
    result = subprocess.run([codegen.flatc_path(), *args], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout


def test_flatc_reads_ours(tmp_path):
    """flatc, given the schema, decodes our size-prefixed file to the same values."""
    path = tmp_path / "trace.etdp"
    path.write_bytes(serialize_to_etdump_flatcc(sample_etdump(), size_prefixed=True))
    _flatc(tmp_path, "--json", "--raw-binary", "--size-prefixed", "--strict-json",
           "--defaults-json", str(SCHEMA_PATH), "--", str(path))
    decoded = json.loads((tmp_path / "trace.json").read_text())
    execute = decoded["run_data"][1]
    assert execute["name"] == "Execute" and execute["bundled_input_index"] == 3
    assert [a["name"] for a in execute["allocators"]] == ["method", "temp"]
    conv = execute["events"][1]["profile_event"]
    assert conv == {"name": "native_call_convolution.out", "chain_index": 0, "instruction_id": 0,
                    "delegate_debug_id_int": -1, "start_time": 426786, "end_time": 971569}
    delegate = execute["events"][3]["profile_event"]
    assert delegate["delegate_debug_id_int"] == 7 and delegate["delegate_debug_metadata"] == [1, 2, 3]
    output = execute["events"][8]["debug_event"]
    assert output["chain_index"] == 2**64 - 1
    assert output["debug_entry"]["val"] == "Tensor" and output["debug_entry"]["output"]["bool_val"]


def test_we_read_flatc(tmp_path):
    """A trace flatc wrote from JSON (the spec's synthetic example) reads back."""
    trace = {"run_data": [{"name": "Execute", "allocators": [{"name": "a"}], "events": [
        {"allocation_event": {"allocator_id": 1, "allocation_size": 16}},
        {"profile_event": {"instruction_id": 2, "delegate_debug_id_int": 7,
                           "delegate_debug_metadata": [1, 2, 3], "start_time": 5, "end_time": 9}},
        {"debug_event": {"instruction_id": 1, "debug_entry": {
            "val": "Tensor", "tensor": {"scalar_type": "FLOAT", "sizes": [2, 2],
                                        "strides": [2, 1], "offset": 64},
            "output": {"bool_val": True}}}}]}]}
    (tmp_path / "trace.json").write_text(json.dumps(trace))
    for prefixed in (True, False):
        _flatc(tmp_path, "--binary", *(["--size-prefixed"] if prefixed else []),
               str(SCHEMA_PATH), "trace.json")
        data = (tmp_path / "trace.etdp").read_bytes()
        etdump = deserialize_from_etdump_flatcc(data)
        run = etdump.run_data[0]
        assert etdump.version == 0 and run.bundled_input_index == -1
        assert run.allocators == [Allocator("a")]
        assert run.events[0].allocation_event == AllocationEvent(1, 16)
        delegate = run.events[1].profile_event
        assert delegate == ProfileEvent(name=None, chain_index=0, instruction_id=2,
                                        delegate_debug_id_int=7, delegate_debug_metadata=b"\1\2\3",
                                        start_time=5, end_time=9)
        debug = run.events[2].debug_event
        assert debug.debug_entry.tensor == Tensor(ScalarType.FLOAT, [2, 2], [2, 1], 64)
        assert debug.debug_entry.output == Bool(True)


@pytest.mark.parametrize("size_prefixed", [False, True])
def test_every_truncation_is_a_clean_error(size_prefixed):
    data = serialize_to_etdump_flatcc(sample_etdump(), size_prefixed=size_prefixed)
    for length in range(len(data)):
        with pytest.raises(ETDumpParseError):
            deserialize_from_etdump_flatcc(data[:length])


@pytest.mark.parametrize("size_prefixed", [False, True])
def test_corrupt_bytes_never_escape_as_other_errors(size_prefixed):
    """Each byte flipped (and random multi-byte damage) either still parses
    or raises ETDumpParseError naming an offset; nothing else escapes."""
    data = serialize_to_etdump_flatcc(sample_etdump(), size_prefixed=size_prefixed)
    rng = random.Random(14)
    damaged = []
    for pos in range(len(data)):
        for mask in (0xFF, 0x80):
            copy = bytearray(data)
            copy[pos] ^= mask
            damaged.append(bytes(copy))
    for _ in range(300):
        copy = bytearray(data)
        for _ in range(rng.randint(2, 8)):
            copy[rng.randrange(len(copy))] = rng.randrange(256)
        damaged.append(bytes(copy))
    errors = 0
    for blob in damaged:
        try:
            deserialize_from_etdump_flatcc(blob)
        except ETDumpParseError as e:
            errors += 1
            assert "offset" in str(e) or "identifier" in str(e) or "truncated" in str(e), str(e)
    assert errors > len(data)  # most damage to offsets and vtables is caught


def test_error_names_field_and_offset():
    data = bytearray(serialize_to_etdump_flatcc(sample_etdump()))
    root = struct.unpack_from("<I", data, 0)[0]
    vtable = root - struct.unpack_from("<i", data, root)[0]
    run_data_field = root + struct.unpack_from("<H", data, vtable + 6)[0]
    struct.pack_into("<I", data, run_data_field, 0x7FFFFFF0)
    with pytest.raises(ETDumpParseError, match=r"ETDump\.run_data.*offset"):
        deserialize_from_etdump_flatcc(bytes(data))


def test_not_an_etdump():
    with pytest.raises(ETDumpParseError, match="expected b'ED00'"):
        deserialize_from_etdump_flatcc(b"\x10\x00\x00\x00ET12" + bytes(32))
    with pytest.raises(ETDumpParseError, match="too short"):
        deserialize_from_etdump_flatcc(b"ED00")


def test_upstream_module_paths():
    from executorch.devtools.etdump import schema_flatcc, serialize
    assert serialize.serialize_to_etdump_flatcc is serialize_to_etdump_flatcc
    assert schema_flatcc.ETDumpFlatCC is ETDump
