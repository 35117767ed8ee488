"""ETDump (.etdp): the runtime's trace, as dataclasses and bytes."""
