"""Ahead-of-time halves of delegate backends."""
