"""BundledProgram <-> .bpte bytes (upstream's
executorch.devtools.bundled_program.serialize).

Both directions are driven by bundled_program.fbs: writing through the
repository's generic flatbuffer writer (which honours force_align, so tensor
data lands 16-aligned and the program 32-aligned from the file start), and
reading through the generic reader beside this file.
"""

from __future__ import annotations

from torchlight.devtools.bundled_program import schema as bp_schema
from torchlight.devtools.bundled_program.core import BundledProgram
from torchlight.pte.flatbuffer_reader import FlatbufferReader, FlatbufferReadError
from torchlight.pte.fbs_schema import FbsSchema, load_fbs
from torchlight.pte.flatbuffer_writer import FlatbufferWriter


def bundled_schema() -> FbsSchema:
    return load_fbs(bp_schema.schema_path())


def serialize_from_bundled_program_to_flatbuffer(bundled_program: BundledProgram) -> bytes:
    """The .bpte file for `bundled_program` (identifier BP08, no size prefix)."""
    tables = bundled_program.serialize_to_schema()
    # The builder grows by doubling; starting near the final size saves copies.
    writer = FlatbufferWriter(bundled_schema(), initial_size=max(4096, len(tables.program) * 2))
    return writer.finish(tables, bp_schema.FILE_IDENTIFIER)


def deserialize_from_flatbuffer_to_bundled_program(flatbuffer: bytes) -> bp_schema.BundledProgram:
    """The tables of a .bpte file (as upstream, the schema's BundledProgram,
    not core.BundledProgram). Raises FlatbufferReadError (a ValueError)
    naming the field when the bytes are not a valid bundled program."""
    reader = FlatbufferReader(bundled_schema(), bp_schema, flatbuffer, empty_when_absent=True,
                              unions_required=True)
    return reader.read_root(bp_schema.FILE_IDENTIFIER)


__all__ = ["serialize_from_bundled_program_to_flatbuffer",
           "deserialize_from_flatbuffer_to_bundled_program", "FlatbufferReadError"]
