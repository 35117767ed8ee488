"""The lowering passes, one module each, in pipeline order.

to_edge (on ExportedPrograms):
  decompose.to_core_aten          core ATen operators, specs on every node
  verify.check_edge_program       every node is lowerable (errors name nodes)

to_executorch (on MethodGraphs, see program_manager.lower_method):
  remove_assertions               no run-time checks or dead code
  view_to_copy                    views become *_copy operators
  scalar_to_tensor                numbers in tensor operands become constants
  buffer_writes.plan_buffer_writes  updated buffers get their new value in place
  out_variants.to_out_variants    out= overloads with alloc'd out tensors
  memory_planning.plan_memory     every planned tensor gets an arena offset
  emit.emit_program               schema.Program plus its data
"""
