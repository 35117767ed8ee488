"""Bundled programs (.bpte): a .pte plus test inputs and expected outputs per
method, under upstream ExecuTorch's module names: config (MethodTestCase,
MethodTestSuite), core (BundledProgram), serialize (to and from bytes) and
schema (the file's tables). The format is described in
devtools/bundled_program/schema/bundled_program.fbs."""
