"""ETRecord: the export-time record the Inspector joins with ETDump."""

from torchlight.devtools.etrecord._etrecord import (ETRecord, ETRecordError, generate_etrecord,
                                                    parse_etrecord)

__all__ = ["ETRecord", "ETRecordError", "generate_etrecord", "parse_etrecord"]
