// gj_function_call and gj_function_call_alloc on a few fixed graphs
// (identity, add, a reduction, embedding, two outputs) with DLTensors whose
// every field the fuzzer chooses: dtype code/bits/lanes, ndim, shape,
// strides or NULL, byte_offset, device, and a data pointer into a buffer the
// harness allocates to the exact size the fuzzer picks, possibly too small.
//
// The library cannot check memory it is not told about, so a tensor that is
// valid by the header is passed only when all its elements lie in the
// harness's buffers; one the header says must be refused (negative or
// overflowing sizes or extent, NULL data, unsupported dtype, another device,
// misaligned, outputs sharing memory) is passed wherever it points, and the
// call must then fail. Every call must return an error or succeed, never
// crash; on error nothing has been written (both buffers are compared with
// a snapshot); on success only output elements have changed, and the
// identity graph's outputs hold its input's values.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_common.h"

namespace {

constexpr const char* kGraphs[] = {
    // 0: identity
    R"pb(name: "identity"
         placeholders { name: "x" }
         outputs { ref: "x" })pb",
    // 1: add, broadcasting
    R"pb(name: "add"
         placeholders { name: "x" }
         placeholders { name: "y" }
         nodes {
           name: "add"
           target: "aten.add.Tensor"
           args { ref: "x" }
           args { ref: "y" }
         }
         outputs { ref: "add" })pb",
    // 2: a reduction over the last dim
    R"pb(name: "sum"
         placeholders { name: "x" }
         nodes {
           name: "sum"
           target: "aten.sum.dim_IntList"
           args { ref: "x" }
           args { list { items { i: -1 } } }
           kwargs {
             key: "keepdim"
             value { b: false }
           }
         }
         outputs { ref: "sum" })pb",
    // 3: embedding: rows of weight picked by (possibly out of range) indices
    R"pb(name: "embedding"
         placeholders { name: "weight" }
         placeholders { name: "indices" }
         nodes {
           name: "embedding"
           target: "aten.embedding.default"
           args { ref: "weight" }
           args { ref: "indices" }
         }
         outputs { ref: "embedding" })pb",
    // 4: two outputs, which must not share memory
    R"pb(name: "two_outputs"
         placeholders { name: "x" }
         nodes {
           name: "neg"
           target: "aten.neg.default"
           args { ref: "x" }
         }
         nodes {
           name: "mul"
           target: "aten.mul.Tensor"
           args { ref: "x" }
           args { ref: "x" }
         }
         outputs { ref: "neg" }
         outputs { ref: "mul" })pb",
};
constexpr int kNumGraphs = sizeof(kGraphs) / sizeof(kGraphs[0]);
constexpr int kNumInputs[kNumGraphs] = {1, 2, 1, 2, 1};
constexpr int kNumOutputs[kNumGraphs] = {1, 1, 1, 1, 2};

// Inputs with more elements than this are not passed: they are valid (0
// strides make them cheap to describe) but the work grows with them.
constexpr int64_t kMaxInputElements = 4096;

// Which context an input runs in.
struct Setup {
  gj_backend backend;
  bool caching;
  gj_context* context() const { return gjfuzz::Context(backend, caching); }
};

gj_graph* Graph(const Setup& setup, int index) {
  static gj_graph* graphs[2][2][kNumGraphs] = {};
  gj_graph*& graph =
      graphs[setup.backend == GJ_BACKEND_EAGER][setup.caching][index];
  if (graph == nullptr) {
    gj_error* error =
        gj_graph_from_text(setup.context(), kGraphs[index],
                           std::strlen(kGraphs[index]), nullptr, &graph);
    if (error != nullptr)
      gjfuzz::Fail("fixed graph does not load:", gj_error_message(error));
  }
  return graph;
}

gj_function* MakeFunction(FuzzedDataProvider& p, const Setup& setup,
                          int index) {
  gjfuzz::PaddedOptions<gj_function_options> padded;
  gj_function_options& options = padded.options;
  gj_function_options_init(&options);
  gj_dynamic_dim marks[3];
  bool use_options = p.ConsumeBool();
  if (use_options) {
    options.struct_size = gjfuzz::PickStructSize<gj_function_options>(p);
    options.name = p.ConsumeBool() ? nullptr : "fuzzed";
    options.recompile_limit = p.ConsumeBool()
                                  ? p.ConsumeIntegralInRange<int32_t>(0, 3)
                                  : p.ConsumeIntegral<int32_t>();
    const int32_t dynamic = p.ConsumeIntegralInRange<int32_t>(-1, 3);
    std::memcpy(&options.dynamic, &dynamic,
                sizeof(dynamic));  // any int a C host may store
    const size_t count = p.ConsumeIntegralInRange<size_t>(0, 3);
    for (size_t i = 0; i < count; ++i) {
      marks[i].input = p.ConsumeIntegralInRange<int32_t>(-1, 2);
      marks[i].dim = p.ConsumeIntegralInRange<int32_t>(-2, 3);
      marks[i].min = gjfuzz::PickSize(p);
      marks[i].max = gjfuzz::PickSize(p);
    }
    options.num_mark_dynamic = count;
    options.mark_dynamic = count > 0 || p.ConsumeBool() ? marks : nullptr;
    if (count > 0 && p.ConsumeIntegralInRange<int>(0, 15) == 0)
      options.mark_dynamic = nullptr;
  }
  gj_function* function = reinterpret_cast<gj_function*>(1);
  if (gjfuzz::Consume(gj_function_create(setup.context(), Graph(setup, index),
                                         use_options ? &options : nullptr,
                                         &function))) {
    if (function != nullptr)
      gjfuzz::Fail("gj_function_create wrote its output on error");
    return nullptr;
  }
  if (function == nullptr)
    gjfuzz::Fail("gj_function_create succeeded without a function");
  if (gj_function_num_inputs(function) !=
          static_cast<size_t>(kNumInputs[index]) ||
      gj_function_num_outputs(function) !=
          static_cast<size_t>(kNumOutputs[index])) {
    gjfuzz::Fail("function input/output counts differ from its graph's");
  }
  return function;
}

bool IsIntegral(DLDataType d) {
  return d.lanes == 1 && (d.code == kDLInt || d.code == kDLUInt);
}

// Bytes a successful call may have changed: the elements of its outputs.
void MarkWritable(const gjfuzz::FuzzTensor& out,
                  std::vector<uint8_t>& writable) {
  if (out.numel == 0 || out.arena == nullptr) return;
  if (out.listed) {
    for (int64_t offset : out.element_offsets) {
      for (int64_t b = 0; b < out.item; ++b) writable[offset + b] = 1;
    }
  } else {
    for (int64_t b = out.lo_byte; b < out.end_byte; ++b) writable[b] = 1;
  }
}

// Whether two outputs (or one with itself) have elements in common.
bool ElementsCollide(const std::vector<const gjfuzz::FuzzTensor*>& outputs,
                     size_t arena_size, const gjfuzz::Arena* arena) {
  std::vector<uint8_t> used(arena_size, 0);
  for (const gjfuzz::FuzzTensor* out : outputs) {
    if (out->numel == 0 || out->arena != arena) continue;
    // More elements than bytes of span: some must share memory.
    if (!out->listed || static_cast<__int128>(out->numel) * out->item >
                            out->end_byte - out->lo_byte) {
      return true;
    }
    for (int64_t offset : out->element_offsets) {
      for (int64_t b = 0; b < out->item; ++b) {
        if (used[offset + b]) return true;
        used[offset + b] = 1;
      }
    }
  }
  return false;
}

void OneCall(FuzzedDataProvider& p, gj_function* function, int index) {
  const size_t in_size = p.ConsumeIntegralInRange<size_t>(0, 512);
  const size_t out_size = p.ConsumeIntegralInRange<size_t>(0, 512);
  gjfuzz::Arena in(in_size), out(out_size);
  {
    std::vector<uint8_t> fill = p.ConsumeBytes<uint8_t>(in_size);
    std::memset(in.begin(), 0, in_size);
    if (!fill.empty()) std::memcpy(in.begin(), fill.data(), fill.size());
    std::memset(out.begin(), 0xA5, out_size);
  }
  const std::vector<const gjfuzz::Arena*> arenas = {&in, &out};
  // gj_function_call_alloc, gj_function_precompile or gj_function_call.
  enum class Mode { kAlloc, kPrecompile, kCall };
  const int pick = p.ConsumeIntegralInRange<int>(0, 7);
  const Mode mode = pick < 2    ? Mode::kAlloc
                    : pick == 2 ? Mode::kPrecompile
                                : Mode::kCall;
  // Whether the header promises an error: for any reason, and for one that
  // gj_function_precompile also sees (it reads no data).
  bool must_fail = false;
  bool meta_must_fail = false;

  // Inputs.
  size_t num_inputs = kNumInputs[index];
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0)
    num_inputs = p.ConsumeIntegralInRange<size_t>(0, 4);
  if (num_inputs != static_cast<size_t>(kNumInputs[index]))
    must_fail = meta_must_fail = true;
  std::vector<gjfuzz::FuzzTensor> input_tensors(num_inputs);
  std::vector<const DLTensor*> input_ptrs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (p.ConsumeIntegralInRange<int>(0, 31) == 0) {
      input_ptrs[i] = nullptr;
      must_fail = meta_must_fail = true;
      continue;
    }
    gjfuzz::MakeTensor(p, arenas, input_tensors[i]);
    const gjfuzz::FuzzTensor& ft = input_tensors[i];
    // gj_function_precompile reads no data: any pointer will do.
    if (ft.verdict == gjfuzz::Verdict::kUnsafe && mode != Mode::kPrecompile)
      return;
    if (ft.verdict == gjfuzz::Verdict::kMustFail) must_fail = true;
    if (!ft.meta_valid) meta_must_fail = true;
    if (ft.verdict == gjfuzz::Verdict::kFits && ft.numel > kMaxInputElements &&
        mode != Mode::kPrecompile)
      return;
    gjfuzz::NormalizeBools(ft);
    gjfuzz::Print("input", ft);
    input_ptrs[i] = &input_tensors[i].t;
  }
  const DLTensor* const* inputs = input_ptrs.data();
  if (num_inputs == 0 && p.ConsumeBool()) inputs = nullptr;
  if (num_inputs > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0) {
    inputs = nullptr;
    must_fail = meta_must_fail = true;
  }

  // Options.
  gjfuzz::PaddedOptions<gj_call_options> padded;
  gj_call_options& options = padded.options;
  gj_call_options_init(&options);
  uint8_t requires_grad[8] = {};
  int32_t cancel_flag = 0;
  const bool use_options = p.ConsumeBool();
  if (use_options) {
    options.struct_size = gjfuzz::PickStructSize<gj_call_options>(p);
    if (options.struct_size < sizeof(size_t)) must_fail = meta_must_fail = true;
    options.grad_mode = p.ConsumeIntegralInRange<int>(0, 7) == 0
                            ? p.ConsumeIntegral<int32_t>()
                            : p.ConsumeBool();
    options.deterministic = p.ConsumeBool();
    if (p.ConsumeBool()) {
      for (auto& r : requires_grad) r = p.ConsumeIntegralInRange<uint8_t>(0, 2);
      options.requires_grad = requires_grad;
    }
    if (p.ConsumeIntegralInRange<int>(0, 3) == 0) {
      cancel_flag = p.ConsumeBool();
      options.cancel = &cancel_flag;
    }
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
        options.timeout_us = p.ConsumeIntegral<int64_t>();
        break;
      case 1:
        options.timeout_us = p.ConsumeIntegralInRange<int64_t>(1, 1000);
        break;
      default:
        options.timeout_us = 0;
    }
    if (options.timeout_us < 0 &&
        options.struct_size >=
            offsetof(gj_call_options, timeout_us) + sizeof(int64_t)) {
      must_fail = true;
    }
  }
  const gj_call_options* options_ptr = use_options ? &options : nullptr;

  const std::vector<uint8_t> in_before(in.begin(), in.begin() + in_size);
  const std::vector<uint8_t> out_before(out.begin(), out.begin() + out_size);
  auto unchanged = [&](const gjfuzz::Arena& arena,
                       const std::vector<uint8_t>& before) {
    return before.empty() ||
           std::memcmp(arena.begin(), before.data(), before.size()) == 0;
  };

  if (mode == Mode::kPrecompile) {
    gj_error* error =
        gj_function_precompile(function, inputs, num_inputs, options_ptr);
    if (!unchanged(in, in_before) || !unchanged(out, out_before)) {
      gjfuzz::Fail("gj_function_precompile wrote into the caller's tensors");
    }
    gj_error_code code;
    if (gjfuzz::Consume(error, &code)) return;
    if (meta_must_fail) {
      gjfuzz::Fail("gj_function_precompile accepted inputs the header refuses");
    }
    return;
  }

  if (mode == Mode::kAlloc) {
    // gj_function_call_alloc: the library allocates the outputs.
    size_t num_outputs = kNumOutputs[index];
    if (p.ConsumeIntegralInRange<int>(0, 15) == 0)
      num_outputs = p.ConsumeIntegralInRange<size_t>(0, 3);
    if (num_outputs != static_cast<size_t>(kNumOutputs[index]))
      must_fail = true;
    std::vector<DLManagedTensor*> results(
        num_outputs + 1, reinterpret_cast<DLManagedTensor*>(8));
    DLManagedTensor** out_ptr = results.data();
    if (p.ConsumeIntegralInRange<int>(0, 31) == 0) {
      out_ptr = nullptr;
      must_fail = true;
    }
    gj_error* error = gj_function_call_alloc(function, inputs, num_inputs,
                                             options_ptr, out_ptr, num_outputs);
    if (!unchanged(in, in_before) || !unchanged(out, out_before)) {
      gjfuzz::Fail("gj_function_call_alloc wrote into the caller's tensors");
    }
    if (gjfuzz::Consume(error)) {
      for (size_t i = 0; out_ptr != nullptr && i < num_outputs; ++i) {
        if (results[i] != nullptr)
          gjfuzz::Fail("gj_function_call_alloc left an output on error");
      }
      return;
    }
    if (must_fail)
      gjfuzz::Fail("gj_function_call_alloc accepted a call the header refuses");
    for (size_t i = 0; i < num_outputs; ++i) {
      gjfuzz::CheckAllocated(results[i]);
      gj_tensor_release(results[i]);
    }
    return;
  }

  // gj_function_call: the caller's outputs, sentinel-filled.
  size_t num_outputs = kNumOutputs[index];
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0)
    num_outputs = p.ConsumeIntegralInRange<size_t>(0, 3);
  if (num_outputs != static_cast<size_t>(kNumOutputs[index])) must_fail = true;
  std::vector<gjfuzz::FuzzTensor> output_tensors(num_outputs);
  std::vector<const DLTensor*> output_ptrs(num_outputs);
  std::vector<const gjfuzz::FuzzTensor*> fitting_outputs;
  for (size_t i = 0; i < num_outputs; ++i) {
    if (p.ConsumeIntegralInRange<int>(0, 31) == 0) {
      output_ptrs[i] = nullptr;
      must_fail = true;
      continue;
    }
    // Outputs mostly in the sentinel-filled buffer; in the input buffer
    // sometimes (an output may overlap an input).
    const std::vector<const gjfuzz::Arena*> where =
        p.ConsumeIntegralInRange<int>(0, 7) == 0
            ? arenas
            : std::vector<const gjfuzz::Arena*>{&out};
    gjfuzz::MakeTensor(p, where, output_tensors[i]);
    const gjfuzz::FuzzTensor& ft = output_tensors[i];
    if (ft.verdict == gjfuzz::Verdict::kUnsafe) return;
    if (ft.verdict == gjfuzz::Verdict::kMustFail) must_fail = true;
    gjfuzz::Print("output", ft);
    if (ft.verdict == gjfuzz::Verdict::kFits)
      fitting_outputs.push_back(&output_tensors[i]);
    output_ptrs[i] = &output_tensors[i].t;
  }
  // identity and two_outputs return tensors of their input's dtype and
  // shape: an output of another must be refused.
  if ((index == 0 || index == 4) && num_inputs == 1 &&
      input_ptrs[0] != nullptr &&
      input_tensors[0].verdict == gjfuzz::Verdict::kFits) {
    const DLTensor& x = input_tensors[0].t;
    for (size_t i = 0; i < num_outputs; ++i) {
      const DLTensor& y = output_tensors[i].t;
      if (output_ptrs[i] == nullptr ||
          output_tensors[i].verdict != gjfuzz::Verdict::kFits)
        continue;
      bool same = x.dtype.code == y.dtype.code &&
                  x.dtype.bits == y.dtype.bits && x.ndim == y.ndim;
      for (int d = 0; same && d < x.ndim; ++d) same = x.shape[d] == y.shape[d];
      if (!same) must_fail = true;
    }
  }
  if (ElementsCollide(fitting_outputs, in_size, &in) ||
      ElementsCollide(fitting_outputs, out_size, &out)) {
    must_fail = true;
  }
  const DLTensor* const* outputs = output_ptrs.data();
  if (num_outputs == 0 && p.ConsumeBool()) outputs = nullptr;
  if (num_outputs > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0) {
    outputs = nullptr;
    must_fail = true;
  }

  gj_error* error = gj_function_call(function, inputs, num_inputs, outputs,
                                     num_outputs, options_ptr);
  if (gjfuzz::Consume(error)) {
    if (!unchanged(in, in_before) || !unchanged(out, out_before)) {
      gjfuzz::Fail("gj_function_call wrote memory although it failed");
    }
    return;
  }
  if (must_fail)
    gjfuzz::Fail("gj_function_call accepted a call the header refuses");
  // Only output elements may have changed.
  std::vector<uint8_t> writable_in(in_size, 0), writable_out(out_size, 0);
  for (const gjfuzz::FuzzTensor* ft : fitting_outputs) {
    MarkWritable(*ft, ft->arena == &in ? writable_in : writable_out);
  }
  for (size_t b = 0; b < in_size; ++b) {
    if (!writable_in[b] && in.begin()[b] != in_before[b]) {
      gjfuzz::Fail("gj_function_call wrote outside its outputs (input buffer)");
    }
  }
  for (size_t b = 0; b < out_size; ++b) {
    if (!writable_out[b] && out.begin()[b] != out_before[b]) {
      gjfuzz::Fail(
          "gj_function_call wrote outside its outputs (output buffer)");
    }
  }
  // Identity: the output holds the input's values (compared for integer
  // dtypes, whose copies are exact bit for bit).
  if (index == 0 && num_outputs == 1) {
    const gjfuzz::FuzzTensor& x = input_tensors[0];
    const gjfuzz::FuzzTensor& y = output_tensors[0];
    if (x.listed && y.listed && x.numel > 0 && x.numel == y.numel &&
        IsIntegral(x.t.dtype) && x.t.dtype.code == y.t.dtype.code &&
        x.t.dtype.bits == y.t.dtype.bits) {
      const std::vector<uint8_t>& source =
          x.arena == &in ? in_before : out_before;
      const unsigned char* dest = y.arena->begin();
      for (int64_t k = 0; k < x.numel; ++k) {
        if (std::memcmp(source.data() + x.element_offsets[k],
                        dest + y.element_offsets[k], x.item) != 0) {
          gjfuzz::Fail("identity: output element differs from the input's");
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  Setup setup;
  setup.backend = p.ConsumeBool() ? GJ_BACKEND_EAGER : GJ_BACKEND_DEFAULT;
  setup.caching = p.ConsumeBool();
  const int index = p.ConsumeIntegralInRange<int>(0, kNumGraphs - 1);
  // A fresh function per input, so an input means the same whatever ran
  // before it; several calls on it reach cache hits and recompiles.
  gj_function* function = MakeFunction(p, setup, index);
  if (function == nullptr) return 0;
  const int calls = p.ConsumeIntegralInRange<int>(1, 3);
  for (int c = 0; c < calls && p.remaining_bytes() > 0; ++c)
    OneCall(p, function, index);
  gj_function_destroy(function);
  return 0;
}
