// Shared by the libFuzzer targets in this folder (each target is one
// translation unit that includes this header once): one context per backend
// per process, checks of the C API's conventions on every result, and
// DLTensors whose every field the fuzzer chooses but whose memory the harness
// can vouch for.
#ifndef GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_
#define GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_

#include <fuzzer/FuzzedDataProvider.h>
#include <guardjit/guardjit.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

// Sanitizer defaults, so that running a target by hand on a reproducer
// behaves as scripts/fuzz.sh does. Single allocations over 256 MiB fail
// (aligned_alloc returns NULL, which the library turns into
// RESOURCE_EXHAUSTED) instead of filling the machine: a graph may
// legitimately ask for a tensor of 2^40 elements. An operator new of that size
// still aborts (ASan does not throw bad_alloc): the library must check sizes
// from its input before it builds vectors or strings of them.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=256:detect_leaks="
         "1:"
         "handle_abort=1";
}
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}

namespace gjfuzz {

// A broken promise of the header: print it and abort, which libFuzzer
// reports as a crash with the input that caused it.
[[noreturn]] inline void Fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "guardjit fuzz: %s %s\n", what, detail);
  std::abort();
}

// The contexts inputs use, one per backend and allocator mode, made once per
// process: one thread, so runs are deterministic, and a small kernel cache,
// so memory stays flat across millions of distinct graphs. caching = false
// turns the caching host allocator off (max_cached_bytes 0), so ASan sees
// every intermediate freed and flags a use after free; true keeps 16 MiB,
// so blocks are reused.
inline gj_context* Context(gj_backend backend = GJ_BACKEND_DEFAULT,
                           bool caching = false) {
  static gj_context* contexts[3][2] = {};
  int index = static_cast<int>(backend);
  if (index < 0 || index > 2) index = 0;
  gj_context*& context = contexts[index][caching];
  if (context == nullptr) {
    gj_context_options options;
    gj_context_options_init(&options);
    options.num_threads = 1;
    options.backend = backend;
    options.max_cached_kernels = 16;
    options.max_cached_bytes = caching ? int64_t{16} << 20 : 0;
    gj_error* error = gj_context_create(&options, &context);
    if (error != nullptr)
      Fail("gj_context_create failed:", gj_error_message(error));
  }
  return context;
}

// Checks an error the API returned: a known code and a non-empty, bounded
// message. Returns true when `error` is an error (and destroys it); *code
// gets its code.
inline bool Consume(gj_error* error, gj_error_code* code_out = nullptr) {
  if (code_out != nullptr) *code_out = GJ_OK;
  if (error == nullptr) return false;
  const gj_error_code code = gj_error_get_code(error);
  if (code <= GJ_OK || code > GJ_UNAUTHENTICATED)
    Fail("error with a code outside absl's");
  const char* message = gj_error_message(error);
  if (message == nullptr || message[0] == '\0') Fail("error without a message");
  // Messages are bounded (4 KiB plus a short note of what was cut).
  if (std::strlen(message) > 8192)
    Fail("error message longer than 8 KiB:", message);
  // INTERNAL and UNKNOWN mean the library caught something it did not
  // expect (an exception, a broken invariant): a bug whatever the input.
  if (code == GJ_INTERNAL || code == GJ_UNKNOWN)
    Fail("INTERNAL/UNKNOWN error:", message);
  if (code_out != nullptr) *code_out = code;
  gj_error_destroy(error);
  return true;
}

// Exercises what a graph offers: its counts, names and tabular dump.
inline void InspectGraph(const gj_graph* graph) {
  const size_t inputs = gj_graph_num_inputs(graph);
  for (size_t i = 0; i < inputs; ++i) {
    if (gj_graph_input_name(graph, i) == nullptr)
      Fail("NULL name of an input in range");
  }
  if (gj_graph_input_name(graph, inputs) != nullptr)
    Fail("a name for an input out of range");
  const size_t outputs = gj_graph_num_outputs(graph);
  for (size_t i = 0; i < outputs; ++i) {
    if (gj_graph_output_name(graph, i) == nullptr)
      Fail("NULL name of an output in range");
  }
  if (gj_graph_output_name(graph, outputs) != nullptr)
    Fail("a name for an output out of range");
  char* text = reinterpret_cast<char*>(1);
  if (!Consume(gj_graph_to_tabular(graph, &text))) {
    if (text == nullptr) Fail("gj_graph_to_tabular succeeded without text");
    gj_string_destroy(text);
  } else if (text != nullptr) {
    Fail("gj_graph_to_tabular wrote its output on error");
  }
}

// --------------------------------------------------------------------------
// Numbers: mostly small, sometimes the edges where arithmetic overflows.

inline int64_t PickSize(FuzzedDataProvider& p) {
  static const int64_t kEdges[] = {
      -1,
      -2,
      std::numeric_limits<int64_t>::min(),
      std::numeric_limits<int64_t>::max(),
      std::numeric_limits<int64_t>::max() - 1,
      int64_t{1} << 31,
      int64_t{1} << 32,
      (int64_t{1} << 32) + 1,
      int64_t{1} << 40,
      int64_t{1} << 62,
      -(int64_t{1} << 62),
      int64_t{3037000500}};  // sqrt(2^63): squares overflow by a hair
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 6:
      return p.PickValueInArray(kEdges);
    case 7:
      return p.ConsumeIntegral<int64_t>();
    default:
      return p.ConsumeIntegralInRange<int64_t>(0, 5);
  }
}

inline int64_t PickStride(FuzzedDataProvider& p) {
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 6:
      return PickSize(p);
    case 7:
      return p.ConsumeIntegral<int64_t>();
    default:
      return p.ConsumeIntegralInRange<int64_t>(-3, 24);
  }
}

// --------------------------------------------------------------------------
// Tensors

// A buffer tensors point into. Heap-allocated to its exact size, so ASan
// flags any access past either end.
struct Arena {
  explicit Arena(size_t size)
      : size(size), bytes(new unsigned char[size == 0 ? 1 : size]) {}
  size_t size;
  std::unique_ptr<unsigned char[]> bytes;
  unsigned char* begin() const { return bytes.get(); }
};

// What the header lets the library do with a tensor.
enum class Verdict {
  kMustFail,  // the header promises an error for it (and so no access)
  kFits,      // valid, and every element lies inside its arena
  kUnsafe,    // valid, but elements lie outside memory the harness owns:
              // the library cannot check that, so it is not passed
};

struct FuzzTensor {
  DLTensor t{};
  std::vector<int64_t> shape, strides;
  const Arena* arena = nullptr;  // where t.data points, if anywhere
  Verdict verdict = Verdict::kMustFail;
  // For kFits with elements: offsets of the first byte of each element from
  // arena->begin() (only up to kMaxListed elements; `listed` false beyond),
  // the item size, and the byte range the elements span.
  std::vector<int64_t> element_offsets;
  bool listed = false;
  // Shape, dtype and device are valid (what gj_function_precompile reads).
  bool meta_valid = false;
  int64_t item = 1;
  int64_t numel = 0;
  int64_t lo_byte = 0, end_byte = 0;  // from arena->begin()
};

constexpr int64_t kMaxListed = 1 << 16;

// The device type as the int the host stored.
inline int32_t RawDeviceType(const DLDevice& device) {
  static_assert(sizeof(device.device_type) == sizeof(int32_t));
  int32_t type;
  std::memcpy(&type, &device.device_type, sizeof(type));
  return type;
}

// The 10 dtypes of gj_dtype, as DLPack writes them.
inline bool SupportedDType(DLDataType d) {
  if (d.lanes != 1) return false;
  switch (d.code) {
    case kDLFloat:
      return d.bits == 16 || d.bits == 32 || d.bits == 64;
    case kDLBfloat:
      return d.bits == 16;
    case kDLInt:
      return d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64;
    case kDLUInt:
      return d.bits == 8;
    case GJ_DL_BOOL:
      return d.bits == 8;
    default:
      return false;
  }
}

inline DLDataType PickDType(FuzzedDataProvider& p) {
  static const DLDataType kValid[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1},
                                      {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
                                      {kDLInt, 8, 1},    {kDLInt, 16, 1},
                                      {kDLInt, 32, 1},   {kDLInt, 64, 1},
                                      {kDLUInt, 8, 1},   {GJ_DL_BOOL, 8, 1}};
  if (p.ConsumeIntegralInRange<int>(0, 9) != 0)
    return p.PickValueInArray(kValid);
  DLDataType d;
  d.code = p.ConsumeIntegral<uint8_t>();
  d.bits = p.ConsumeIntegral<uint8_t>();
  d.lanes = p.ConsumeIntegral<uint16_t>();
  return d;
}

// Decides what the header says of `ft.t` and, for tensors that fit, lists
// their elements. Item size for the extent: whole bytes of bits * lanes (at
// least 1), whatever the dtype, so memory stays vouched for even if the
// library were to accept a dtype it should not.
inline void Classify(FuzzTensor& ft) {
  const DLTensor& t = ft.t;
  ft.verdict = Verdict::kMustFail;
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) return;
  bool has_zero = false;
  __int128 nonzero = 1;  // the product of the nonzero sizes
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0) return;
    if (t.shape[d] == 0) {
      has_zero = true;
      continue;
    }
    nonzero *= t.shape[d];
    // Must fit even beside a 0 dim: OUT_OF_RANGE.
    if (nonzero > std::numeric_limits<int64_t>::max()) return;
  }
  const __int128 numel = has_zero ? 0 : nonzero;
  if (!SupportedDType(t.dtype)) return;
  // Host memory, which the library reads: kDLCPU with device_id 0, or
  // kDLCUDAHost (pinned host memory) of a device ordinal. A kDLCUDA tensor
  // must fail here: no machine running the fuzzers has a CUDA driver
  // (UNAVAILABLE), and the library must not read it as host memory.
  const int32_t type = RawDeviceType(t.device);
  const bool host = (type == kDLCPU && t.device.device_id == 0) ||
                    (type == kDLCUDAHost && t.device.device_id >= 0);
  if (!host) return;
  ft.meta_valid = true;
  const int64_t item =
      std::max<int64_t>(1, (int64_t{t.dtype.bits} * t.dtype.lanes + 7) / 8);
  ft.item = item;
  ft.numel = static_cast<int64_t>(numel);
  if (numel == 0) {
    ft.verdict = Verdict::kFits;  // nothing is read or written through data
    ft.listed = true;
    return;
  }
  if (t.data == nullptr) return;
  // Element offsets of the lowest and highest element, as the contiguous
  // strides of a NULL strides field give them otherwise.
  std::vector<int64_t> strides(t.ndim);
  if (t.strides != nullptr) {
    for (int d = 0; d < t.ndim; ++d) strides[d] = t.strides[d];
  } else {
    __int128 s = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      strides[d] = static_cast<int64_t>(s);
      s *= t.shape[d];
    }
  }
  const __int128 kMax = std::numeric_limits<int64_t>::max();
  __int128 lo = 0, hi = 0;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] <= 1) continue;
    __int128 span = static_cast<__int128>(strides[d]) * (t.shape[d] - 1);
    (span >= 0 ? hi : lo) += span;
    if (hi > kMax || -lo > kMax) return;  // OUT_OF_RANGE
  }
  if ((hi - lo + 1) * item > kMax) return;  // OUT_OF_RANGE
  if (static_cast<__int128>(t.byte_offset) + (hi + 1) * item > kMax) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  if (first < reinterpret_cast<uintptr_t>(t.data)) return;  // wraps around
  if (first % static_cast<uintptr_t>(item) != 0) return;    // misaligned
  if (static_cast<__int128>(first) + lo * item < 0 ||
      static_cast<__int128>(first) + (hi + 1) * item >
          static_cast<__int128>(std::numeric_limits<uintptr_t>::max())) {
    return;  // elements outside the address space: OUT_OF_RANGE
  }
  // Valid: does every element lie inside the arena?
  ft.verdict = Verdict::kUnsafe;
  if (ft.arena == nullptr) return;
  const __int128 base = reinterpret_cast<uintptr_t>(ft.arena->begin());
  const __int128 lo_byte = static_cast<__int128>(first) + lo * item - base;
  const __int128 end_byte =
      static_cast<__int128>(first) + (hi + 1) * item - base;
  if (lo_byte < 0 || end_byte > static_cast<__int128>(ft.arena->size)) return;
  ft.verdict = Verdict::kFits;
  ft.lo_byte = static_cast<int64_t>(lo_byte);
  ft.end_byte = static_cast<int64_t>(end_byte);
  if (numel > kMaxListed) return;
  ft.listed = true;
  std::vector<int64_t> index(t.ndim, 0);
  const int64_t origin =
      static_cast<int64_t>(static_cast<__int128>(first) - base);
  for (int64_t k = 0; k < ft.numel; ++k) {
    int64_t offset = 0;
    for (int d = 0; d < t.ndim; ++d) offset += index[d] * strides[d];
    ft.element_offsets.push_back(origin + offset * item);
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
    }
  }
}

// A DLTensor with every field from the fuzzer, pointing into one of `arenas`
// (or NULL, or nowhere in particular). max_rank bounds the shape and strides
// arrays the harness allocates: DLPack says they hold ndim entries, so a
// larger ndim with a shorter array would be the harness's bug.
inline void MakeTensor(FuzzedDataProvider& p,
                       const std::vector<const Arena*>& arenas, FuzzTensor& ft,
                       int max_rank = 6) {
  DLTensor& t = ft.t;
  t.dtype = PickDType(p);
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      t.ndim = p.ConsumeIntegral<int32_t>();
      break;
    case 1:
      t.ndim = p.ConsumeIntegralInRange<int32_t>(-3, 70);
      break;
    default:
      t.ndim = p.ConsumeIntegralInRange<int32_t>(0, max_rank);
  }
  const int32_t stored = t.ndim < 0 ? 0 : std::min<int32_t>(t.ndim, 70);
  if (stored != t.ndim && t.ndim > 0) t.ndim = stored;  // no array that long
  ft.shape.resize(stored);
  for (auto& s : ft.shape) s = PickSize(p);
  const bool null_shape = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  t.shape = null_shape ? nullptr : (stored > 0 ? ft.shape.data() : nullptr);
  if (!null_shape && stored == 0 && p.ConsumeBool()) t.shape = ft.shape.data();
  if (p.ConsumeBool()) {
    t.strides = nullptr;
  } else {
    ft.strides.resize(stored);
    // Often the row-major strides, transposed or broadcast; else anything.
    const int mode = p.ConsumeIntegralInRange<int>(0, 3);
    int64_t s = 1;
    for (int d = stored - 1; d >= 0; --d) {
      if (mode == 3) {
        ft.strides[d] = PickStride(p);
        continue;
      }
      ft.strides[d] = s;
      const int64_t size = ft.shape[d] < 1 ? 1 : ft.shape[d];
      if (__builtin_mul_overflow(s, size, &s)) s = 1;  // wraps to small
    }
    if (mode == 1 && stored >= 2) {
      const int a = p.ConsumeIntegralInRange<int>(0, stored - 1);
      const int b = p.ConsumeIntegralInRange<int>(0, stored - 1);
      std::swap(ft.strides[a], ft.strides[b]);
    }
    if (mode == 2 && stored >= 1) {
      ft.strides[p.ConsumeIntegralInRange<int>(0, stored - 1)] = 0;
    }
    t.strides = ft.strides.data();
  }
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      t.byte_offset = p.ConsumeIntegral<uint64_t>();
      break;
    case 1:
    case 2:
      t.byte_offset = p.ConsumeIntegralInRange<uint64_t>(0, 64);
      break;
    default:
      t.byte_offset = 0;
  }
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0) {
    // Any int a C host may store in the enum, copied as bytes (loading a
    // value outside DLDeviceType's range as the enum would be undefined).
    const int32_t type = p.ConsumeBool()
                             ? p.ConsumeIntegralInRange<int32_t>(0, 20)
                             : p.ConsumeIntegral<int32_t>();
    std::memcpy(&t.device.device_type, &type, sizeof(type));
    t.device.device_id = p.ConsumeIntegral<int32_t>();
  } else {
    t.device.device_type = kDLCPU;
    t.device.device_id = p.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  }
  ft.arena = nullptr;
  const int where = p.ConsumeIntegralInRange<int>(0, 15);
  if (where == 0 || arenas.empty()) {
    t.data = nullptr;
  } else if (where == 1) {
    // A pointer near the top of the address space: only an empty tensor or
    // one the library must refuse may carry it.
    t.data = reinterpret_cast<void*>(
        ~uintptr_t{0} - p.ConsumeIntegralInRange<uintptr_t>(0, 64));
  } else {
    ft.arena = arenas[p.ConsumeIntegralInRange<size_t>(0, arenas.size() - 1)];
    const size_t offset = p.ConsumeIntegralInRange<size_t>(0, ft.arena->size);
    t.data = ft.arena->begin() + offset;
  }
  Classify(ft);
}

// A bool tensor's elements hold 0 or 1 (DLPack's and PyTorch's bool; the
// library loads them as C++ bool, for which any other byte is undefined), so
// a valid bool tensor gets its elements' bytes masked to their low bit.
inline void NormalizeBools(const FuzzTensor& ft) {
  const DLDataType d = ft.t.dtype;
  if (ft.verdict != Verdict::kFits || ft.numel == 0 || ft.arena == nullptr ||
      d.code != GJ_DL_BOOL || d.bits != 8 || d.lanes != 1) {
    return;
  }
  unsigned char* bytes = ft.arena->begin();
  if (ft.listed) {
    for (int64_t offset : ft.element_offsets) bytes[offset] &= 1;
  } else {
    for (int64_t b = ft.lo_byte; b < ft.end_byte; ++b) bytes[b] &= 1;
  }
}

// GJFUZZ_VERBOSE=1 in the environment prints every tensor a harness passes
// (for reading a reproducer).
inline bool Verbose() {
  static const bool verbose = std::getenv("GJFUZZ_VERBOSE") != nullptr;
  return verbose;
}

inline void Print(const char* label, const FuzzTensor& ft) {
  if (!Verbose()) return;
  const DLTensor& t = ft.t;
  std::fprintf(stderr, "%s: dtype (%d,%d,%d) ndim %d shape [", label,
               t.dtype.code, t.dtype.bits, t.dtype.lanes, t.ndim);
  for (int d = 0; t.shape != nullptr && d < t.ndim; ++d)
    std::fprintf(stderr, "%s%lld", d ? ", " : "", (long long)t.shape[d]);
  std::fprintf(stderr, "]%s strides ", t.shape == nullptr ? " (NULL)" : "");
  if (t.strides == nullptr) {
    std::fprintf(stderr, "NULL");
  } else {
    for (int d = 0; d < t.ndim; ++d)
      std::fprintf(stderr, "%s%lld", d ? ", " : "[", (long long)t.strides[d]);
    std::fprintf(stderr, "]");
  }
  std::fprintf(stderr,
               " byte_offset %llu device (%d,%d) data %p arena %p+%zu "
               "verdict %s\n",
               (unsigned long long)t.byte_offset, RawDeviceType(t.device),
               t.device.device_id, t.data,
               ft.arena ? (void*)ft.arena->begin() : nullptr,
               ft.arena ? ft.arena->size : 0,
               ft.verdict == Verdict::kFits       ? "fits"
               : ft.verdict == Verdict::kMustFail ? "must-fail"
                                                  : "unsafe");
}

// An output of gj_function_call_alloc: a plausible CPU tensor with
// row-major strides whose every byte can be read.
inline void CheckAllocated(const DLManagedTensor* managed) {
  if (managed == nullptr)
    Fail("gj_function_call_alloc succeeded with a NULL output");
  const DLTensor& t = managed->dl_tensor;
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    Fail("allocated output: bad shape");
  if (!SupportedDType(t.dtype)) Fail("allocated output: unsupported dtype");
  if (RawDeviceType(t.device) != kDLCPU || t.device.device_id != 0) {
    Fail("allocated output: not a CPU tensor");
  }
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0) Fail("allocated output: negative size");
    if (__builtin_mul_overflow(numel, t.shape[d], &numel))
      Fail("allocated output: size overflows");
  }
  // Row-major strides, as the header promises (any for an empty tensor).
  if (t.strides != nullptr && numel > 0) {
    int64_t expected = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected) {
        Fail("allocated output: strides not row-major");
      }
      expected *= t.shape[d];
    }
  }
  if (numel == 0) return;
  if (t.data == nullptr) Fail("allocated output: NULL data");
  // Read every byte: ASan checks the buffer is as large as the tensor says.
  const unsigned char* bytes =
      static_cast<const unsigned char*>(t.data) + t.byte_offset;
  const size_t nbytes = static_cast<size_t>(numel) * (t.dtype.bits / 8);
  unsigned sum = 0;
  for (size_t i = 0; i < nbytes; ++i) sum += bytes[i];
  volatile unsigned sink = sum;
  (void)sink;
}

// The options struct with every field from the fuzzer, inside a zeroed
// buffer larger than the struct (a struct_size beyond the library's own
// struct names bytes the harness owns).
template <typename Options>
struct PaddedOptions {
  Options options;
  unsigned char padding[64] = {};
};

template <typename Options>
size_t PickStructSize(FuzzedDataProvider& p) {
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      return p.ConsumeIntegralInRange<size_t>(0, sizeof(Options) + 64);
    case 1:  // an older host: the struct up to one of its fields
      return p.ConsumeIntegralInRange<size_t>(sizeof(size_t), sizeof(Options));
    default:
      return sizeof(Options);
  }
}

}  // namespace gjfuzz

#endif  // GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_
