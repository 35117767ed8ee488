"""The lowering passes, one module each, in pipeline order.

to_edge (on ExportedPrograms):
  decompose.to_core_aten          core ATen operators (aten::linear kept), specs on every node
  verify.check_edge_program       every node is lowerable (errors name nodes)

to_executorch (on MethodGraphs, see program_manager.lower_method):
  fuse_quantized_linear.fuse_quantized_linears  (torchlight target) 8da4w linears -> linear_8da4w, pt2e int8 -> linear_qs8, int8 weight-only -> linear_int8, 4w -> linear_4w
  fuse_llm_chains.fuse_llm_chains  (torchlight target) RMSNorm -> rms_norm, x * sigmoid(x) -> silu
  in_place_calls.lower_in_place_calls  mutating custom ops called on the buffers themselves
  control_flow.lower_control_flow torch.cond inlined between jump markers
  remove_assertions               no run-time checks or dead code
  view_to_copy                    views become *_copy operators
  scalar_to_tensor                numbers in tensor operands become constants
  buffer_writes.plan_buffer_writes  updated buffers get their new value in place
  out_variants.to_out_variants    out= overloads with alloc'd out tensors
  alias_views.alias_views         views of planned intermediates share their base's bytes
  memory_planning.plan_memory     every planned tensor gets an arena offset
  free_calls.plan_input_frees     (free_unplanned_inputs) where each input's borrow ends
  emit.emit_program               schema.Program plus its data
"""
