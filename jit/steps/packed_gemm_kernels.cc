#include "jit/steps/packed_gemm_kernels.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace guardjit {
namespace {

#if defined(__x86_64__)

// One tile of rows x the panel's columns over a k block: A's rows `lda`
// apart (`a` at the tile's first row and the block's first k), the panel's
// rows of B from `pb`, C at the tile's first element (`ldc` apart, its
// first `cols` columns real). Accumulators start at zero
// in the first block and at C's partial sums after it; the last block
// scales by alpha. A call runs `tiles` such tiles down the rows.
using TileFn = void (*)(const float* a, int64_t lda, const float* pb,
                        int64_t kn, float* c, int64_t ldc, int cols, bool first,
                        bool last, float alpha, int64_t tiles);

template <int W>
struct Vec;
template <>
struct Vec<4> {
  typedef float T __attribute__((vector_size(16)));
};
template <>
struct Vec<8> {
  typedef float T __attribute__((vector_size(32)));
};
template <>
struct Vec<16> {
  typedef float T __attribute__((vector_size(64)));
};

// The first `lanes` floats at p, zeros after them. (Through a pointer:
// vectors passed by value would change ABI with the instruction set.)
template <int W>
[[gnu::always_inline]] inline void Load(typename Vec<W>::T* v, const float* p,
                                        int lanes) {
  if (lanes >= W) {
    std::memcpy(v, p, sizeof(*v));
  } else {
    float part[W] = {};
    if (lanes > 0) std::memcpy(part, p, sizeof(float) * lanes);
    std::memcpy(v, part, sizeof(*v));
  }
}

template <int W>
[[gnu::always_inline]] inline void Store(const typename Vec<W>::T& v, float* p,
                                         int lanes) {
  if (lanes >= W) {
    std::memcpy(p, &v, sizeof(v));
  } else if (lanes > 0) {
    float part[W];
    std::memcpy(part, &v, sizeof(v));
    std::memcpy(p, part, sizeof(float) * lanes);
  }
}

// Lanes of vector v that hold one of the panel's `cols` real columns.
template <int W>
constexpr int Lanes(int cols, int v) {
  return std::clamp(cols - v * W, 0, W);
}

template <int W, int R, int V>
[[gnu::always_inline]] inline void TileBody(const float* a, int64_t lda,
                                            const float* pb, int64_t kn,
                                            float* c, int64_t ldc, int cols,
                                            bool first, bool last,
                                            float alpha) {
  using T = typename Vec<W>::T;
  // Whole panels (every panel but maybe the last) load and store C's
  // vectors whole; the last one's vectors past n are partial or empty.
  const bool whole = cols >= V * W;
  T acc[R][V];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = T{};
  }
  if (!first) {
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        Load<W>(&acc[r][v], c + r * ldc + v * W, whole ? W : Lanes<W>(cols, v));
      }
    }
  }
  // A's rows in groups of three from one pointer each, as MLAS reads them:
  // row 3j + i at base[j] + i * lda, one stride register and scales of 4
  // and 8 in the addressing, where a pointer per row ran out of registers.
  constexpr int kGroups = (R + 2) / 3;
  const float* base[kGroups];
#pragma GCC unroll 16
  for (int j = 0; j < kGroups; ++j) base[j] = a + 3 * j * lda;
  for (int64_t k = 0; k < kn; ++k) {
    T b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) std::memcpy(&b[v], pb + v * W, sizeof(T));
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const float s = base[r / 3][(r % 3) * lda];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] += b[v] * s;
    }
#pragma GCC unroll 16
    for (int j = 0; j < kGroups; ++j) ++base[j];
    pb += V * W;
  }
  if (last && alpha != 1.0f) {
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] *= alpha;
    }
  }
  if (whole) {
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        std::memcpy(c + r * ldc + v * W, &acc[r][v], sizeof(T));
      }
    }
  } else {
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        Store<W>(acc[r][v], c + r * ldc + v * W, Lanes<W>(cols, v));
      }
    }
  }
}

// `tiles` tiles of R rows one under the other: A and C R rows further on
// for each.
template <int W, int R, int V>
[[gnu::always_inline]] inline void TilesBody(const float* a, int64_t lda,
                                             const float* pb, int64_t kn,
                                             float* c, int64_t ldc, int cols,
                                             bool first, bool last, float alpha,
                                             int64_t tiles) {
  for (int64_t t = 0; t < tiles; ++t) {
    TileBody<W, R, V>(a + t * R * lda, lda, pb, kn, c + t * R * ldc, ldc, cols,
                      first, last, alpha);
  }
}

// The instruction sets, each its tiles compiled for it.
struct Avx512 {
  static constexpr int kWidth = 16;
  static constexpr int kRegisters = 32;
  static bool Supported() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  }
  template <int R, int V>
  __attribute__((target("avx512f,fma"))) static void Tile(
      const float* a, int64_t lda, const float* pb, int64_t kn, float* c,
      int64_t ldc, int cols, bool first, bool last, float alpha,
      int64_t tiles) {
    TilesBody<kWidth, R, V>(a, lda, pb, kn, c, ldc, cols, first, last, alpha,
                            tiles);
  }
};

struct Avx2 {
  static constexpr int kWidth = 8;
  static constexpr int kRegisters = 16;
  static bool Supported() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  template <int R, int V>
  __attribute__((target("avx2,fma"))) static void Tile(
      const float* a, int64_t lda, const float* pb, int64_t kn, float* c,
      int64_t ldc, int cols, bool first, bool last, float alpha,
      int64_t tiles) {
    TilesBody<kWidth, R, V>(a, lda, pb, kn, c, ldc, cols, first, last, alpha,
                            tiles);
  }
};

struct Sse2 {  // every x86-64
  static constexpr int kWidth = 4;
  static constexpr int kRegisters = 16;
  static bool Supported() { return true; }
  template <int R, int V>
  static void Tile(const float* a, int64_t lda, const float* pb, int64_t kn,
                   float* c, int64_t ldc, int cols, bool first, bool last,
                   float alpha, int64_t tiles) {
    TilesBody<kWidth, R, V>(a, lda, pb, kn, c, ldc, cols, first, last, alpha,
                            tiles);
  }
};

// The tallest tile of `vectors` vectors ChoosePackedGemm considers:
// accumulators, the panel row's vectors and a broadcast in registers.
constexpr int MaxRows(int registers, int vectors) {
  return (registers - vectors - 1) / vectors;
}

template <class Isa, int V, int... Rs>
constexpr std::array<TileFn, sizeof...(Rs) + 1> RowTable(
    std::integer_sequence<int, Rs...>) {
  return {nullptr, &Isa::template Tile<Rs + 1, V>...};
}

template <class Isa, int V>
TileFn RowsOf(int rows) {
  constexpr int kMax = MaxRows(Isa::kRegisters, V);
  static constexpr std::array<TileFn, kMax + 1> kTable =
      RowTable<Isa, V>(std::make_integer_sequence<int, kMax>());
  return rows >= 1 && rows <= kMax ? kTable[rows] : nullptr;
}

template <class Isa>
TileFn TileOf(int rows, int vectors) {
  switch (vectors) {
    case 1:
      return RowsOf<Isa, 1>(rows);
    case 2:
      return RowsOf<Isa, 2>(rows);
    case 3:
      return RowsOf<Isa, 3>(rows);
    case 4:
      return RowsOf<Isa, 4>(rows);
  }
  return nullptr;
}

template <class Isa>
void RunPanels(const PackedGemm& g, const float* a, int64_t lda,
               const float* packed_b, float* c, int64_t begin, int64_t end) {
  const int rows = g.tile_rows;
  const int vectors = g.panel_width / Isa::kWidth;
  const TileFn whole = TileOf<Isa>(rows, vectors);
  const int tail_rows = static_cast<int>(g.m % rows);
  const TileFn tail = tail_rows > 0 ? TileOf<Isa>(tail_rows, vectors) : nullptr;
  const int64_t whole_tiles = g.m / rows;
  const int64_t pw = g.panel_width;
  const int64_t blocks = (g.k + g.k_block - 1) / g.k_block;
  const float alpha = static_cast<float>(g.alpha);
  for (int64_t p = begin; p < end; ++p) {
    const float* panel = packed_b + p * g.k * pw;
    const int64_t col0 = p * pw;
    const int cols = static_cast<int>(std::min(pw, g.n - col0));
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t k0 = block * g.k_block;
      const int64_t kn = std::min(g.k, k0 + g.k_block) - k0;
      const bool first = block == 0, last = block == blocks - 1;
      if (whole_tiles > 0) {
        whole(a + k0, lda, panel + k0 * pw, kn, c + col0, g.n, cols, first,
              last, alpha, whole_tiles);
      }
      if (tail != nullptr) {
        tail(a + whole_tiles * rows * lda + k0, lda, panel + k0 * pw, kn,
             c + whole_tiles * rows * g.n + col0, g.n, cols, first, last, alpha,
             1);
      }
    }
  }
}

template <class Isa>
PackedGemmKernel KernelOf(const PackedGemm& g) {
  if (g.vector_width != Isa::kWidth || !Isa::Supported()) return nullptr;
  const int vectors = g.panel_width / Isa::kWidth;
  if (TileOf<Isa>(g.tile_rows, vectors) == nullptr) return nullptr;
  return &RunPanels<Isa>;
}

#endif  // defined(__x86_64__)

}  // namespace

PackedGemmKernel FindPackedGemmKernel(const PackedGemm& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.vector_width < 1 ||
      g.panel_width < g.vector_width || g.panel_width % g.vector_width != 0 ||
      g.tile_rows < 1 || g.k_block < 1 || g.k_block > g.k) {
    return nullptr;
  }
#if defined(__x86_64__)
  if (PackedGemmKernel kernel = KernelOf<Avx512>(g)) return kernel;
  if (PackedGemmKernel kernel = KernelOf<Avx2>(g)) return kernel;
  if (PackedGemmKernel kernel = KernelOf<Sse2>(g)) return kernel;
#endif
  return nullptr;
}

void CopyGemmRows(const PackedGemm& g, const float* a, float* out) {
  for (int64_t i = 0; i < g.m; ++i) {
    const float* src = a + i * g.lda;
    float* dst = out + i * g.k;
    for (int64_t k = 0; k < g.k; ++k) dst[k] = src[k * g.a_col_stride];
  }
}

}  // namespace guardjit
