"""The Inspector: ETDump traces joined with ETRecord (upstream's names)."""

from torchlight.devtools.inspector._event_blocks import (DebugBufferError, Event, EventBlock,
                                                         PerfData, TimeScale)
from torchlight.devtools.inspector._inspector import Inspector

__all__ = ["DebugBufferError", "Event", "EventBlock", "Inspector", "PerfData", "TimeScale"]
