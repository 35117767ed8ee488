"""Conformance case modules: one per operator family, each defining CASES.

generate.py imports every module in this package.
"""
