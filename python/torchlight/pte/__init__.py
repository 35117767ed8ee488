"""The .pte format: schema objects, flatbuffer writing, file layout, reading."""
