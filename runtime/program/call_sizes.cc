#include "runtime/program/call_sizes.h"

namespace guardjit {

void EvaluateRef(const TensorRef& ref, absl::Span<const int64_t> symbols,
                 ConcreteRef& out) {
  out.slot = ref.slot;
  out.sizes = EvaluateShape(ref.sizes, symbols);
  out.strides = EvaluateShape(ref.strides, symbols);
  out.offset = ref.offset.Evaluate(symbols);
}

void EvaluateSizes(const Program& program, absl::Span<const int64_t> symbols,
                   CallSizes& out) {
  out.slots.resize(program.slots.size());
  for (size_t s = 0; s < program.slots.size(); ++s) {
    out.slots[s] = EvaluateShape(program.slots[s].sizes, symbols);
  }
  // The plan's buffers end to end, each cache-line aligned.
  const size_t num_buffers = program.buffer_bytes.size();
  out.buffer_bytes.resize(num_buffers);
  out.buffer_offset.resize(num_buffers);
  out.arena_bytes = 0;
  for (size_t b = 0; b < num_buffers; ++b) {
    out.buffer_bytes[b] = program.buffer_bytes[b].Evaluate(symbols);
    out.buffer_offset[b] = out.arena_bytes;
    out.arena_bytes +=
        (out.buffer_bytes[b] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  }
  out.outputs.resize(program.outputs.size());
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    EvaluateRef(program.outputs[k], symbols, out.outputs[k]);
  }
}

}  // namespace guardjit
