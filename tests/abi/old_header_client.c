/* A host built against an older guardjit.h (tests/abi/headers/<version>/, as
 * that release shipped it) and linked against today's libguardjit.so, as a
 * binary built then and run against a newer library is. Each options and
 * stats struct sits between guard bytes; the old header's gj_*_init
 * (a library call up to 0.10) must fill the struct without writing past
 * the host's sizeof, and the host's own settings must still be read. Then a
 * graph is loaded, compiled and called through the old declarations.
 *
 * Built three times by tests/CMakeLists.txt: against 0.1's header (the
 * oldest), 0.4's, and today's (where gj_*_init is inline). Prints
 * "old header client 0.N: ok" and exits 0, else names what failed. */
#include <guardjit/guardjit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 64
#define GUARD 0xA5

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "old header client 0.%d: %s:%d: ", GJ_API_VERSION_MINOR, \
              __FILE__, __LINE__);                                             \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define CHECK_OK(expr)                                          \
  do {                                                          \
    gj_error* err_ = (expr);                                    \
    if (err_ != NULL) {                                         \
      CHECK(0, "%s failed: %s", #expr, gj_error_message(err_)); \
      gj_error_destroy(err_);                                   \
      goto done;                                                \
    }                                                           \
  } while (0)

/* A struct of `size` bytes at buf + GUARD_BYTES, guard bytes around it. */
static unsigned char* Guarded(unsigned char* buf, size_t size) {
  memset(buf, GUARD, size + 2 * GUARD_BYTES);
  return buf + GUARD_BYTES;
}

static void CheckGuards(const unsigned char* buf, size_t size,
                        const char* what) {
  size_t i;
  for (i = 0; i < GUARD_BYTES; ++i) {
    CHECK(buf[i] == GUARD, "%s: byte %d before the struct was written", what,
          (int)(GUARD_BYTES - i));
    CHECK(buf[GUARD_BYTES + size + i] == GUARD,
          "%s: byte %d past its %d-byte struct was written (the library "
          "filled a larger struct than this header's)",
          what, (int)i, (int)size);
  }
}

/* Calls INIT on a guarded TYPE, checks the guards and struct_size, and
 * copies it into VAR. */
#define INIT_GUARDED(TYPE, INIT, VAR)                                         \
  do {                                                                        \
    unsigned char buf_[sizeof(TYPE) + 2 * GUARD_BYTES];                       \
    TYPE* s_ = (TYPE*)(void*)Guarded(buf_, sizeof(TYPE));                     \
    INIT(s_);                                                                 \
    CheckGuards(buf_, sizeof(TYPE), #INIT);                                   \
    CHECK(                                                                    \
        s_->struct_size >= sizeof(size_t) && s_->struct_size <= sizeof(TYPE), \
        "%s: struct_size %d outside 8..%d", #INIT, (int)s_->struct_size,      \
        (int)sizeof(TYPE));                                                   \
    memcpy(&(VAR), s_, sizeof(TYPE));                                         \
  } while (0)

static const char kGraph[] =
    "name: \"mul\"\n"
    "placeholders { name: \"x\" meta { dtype: FLOAT32 sizes: 4 } }\n"
    "placeholders { name: \"y\" meta { dtype: FLOAT32 sizes: 4 } }\n"
    "nodes { name: \"mul\" target: \"aten.mul.Tensor\" args { ref: \"x\" } "
    "args { ref: \"y\" } }\n"
    "outputs { ref: \"mul\" }\n";

static DLTensor Vector(float* data, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

int main(void) {
  gj_context* ctx = NULL;
  gj_graph* graph = NULL;
  gj_function* fn = NULL;
  gj_context_options ctx_opts;
  gj_graph_load_options load_opts;
  gj_function_options fn_opts;
  gj_call_options call_opts;
  float x[4] = {1, 2, 3, 4}, y[4] = {2, 3, -1, 0.5f}, out[4] = {0, 0, 0, 0};
  int64_t shape[1] = {4};
  DLTensor tx = Vector(x, shape), ty = Vector(y, shape),
           tout = Vector(out, shape);
  const DLTensor* inputs[2];
  const DLTensor* outputs[1];
  int i;
  inputs[0] = &tx;
  inputs[1] = &ty;
  outputs[0] = &tout;

  CHECK((gj_api_version() >> 16) == GJ_API_VERSION_MAJOR,
        "loaded library's major version %u, header's %d",
        gj_api_version() >> 16, GJ_API_VERSION_MAJOR);
  CHECK((gj_api_version() & 0xffff) >= GJ_API_VERSION_MINOR,
        "loaded library 0.%u is older than the header",
        gj_api_version() & 0xffff);

  INIT_GUARDED(gj_context_options, gj_context_options_init, ctx_opts);
  CHECK(ctx_opts.num_threads == 0, "num_threads default %d",
        (int)ctx_opts.num_threads);
  ctx_opts.num_threads = 1; /* the host's own setting, in its first release */
  INIT_GUARDED(gj_graph_load_options, gj_graph_load_options_init, load_opts);
  CHECK(load_opts.external_data_dir == NULL, "external_data_dir not NULL");
  INIT_GUARDED(gj_function_options, gj_function_options_init, fn_opts);
  CHECK(fn_opts.dynamic == GJ_DYNAMIC_AUTO, "dynamic default %d",
        (int)fn_opts.dynamic);
  CHECK(fn_opts.recompile_limit == 8, "recompile_limit default %d",
        (int)fn_opts.recompile_limit);
  fn_opts.name = "old_header_client";
  fn_opts.dynamic = GJ_DYNAMIC_STATIC;
  INIT_GUARDED(gj_call_options, gj_call_options_init, call_opts);
  CHECK(call_opts.grad_mode == 1, "grad_mode default %d",
        (int)call_opts.grad_mode);

  CHECK_OK(gj_context_create(&ctx_opts, &ctx));
  CHECK_OK(
      gj_graph_from_text(ctx, kGraph, sizeof kGraph - 1, &load_opts, &graph));
  CHECK_OK(gj_function_create(ctx, graph, &fn_opts, &fn));
  CHECK(gj_function_num_inputs(fn) == 2, "%d inputs",
        (int)gj_function_num_inputs(fn));
  for (i = 0; i < 3; ++i) {
    CHECK_OK(gj_function_call(fn, inputs, 2, outputs, 1, &call_opts));
  }
  for (i = 0; i < 4; ++i) {
    CHECK(out[i] == x[i] * y[i], "out[%d] = %g, expected %g", i, out[i],
          x[i] * y[i]);
  }
#if GJ_API_VERSION_MINOR >= 2
  {
    gj_function_stats stats;
    INIT_GUARDED(gj_function_stats, gj_function_stats_init, stats);
    {
      /* get_stats fills what fits in struct_size: guard it too. */
      unsigned char buf[sizeof(gj_function_stats) + 2 * GUARD_BYTES];
      gj_function_stats* s =
          (gj_function_stats*)(void*)Guarded(buf, sizeof(gj_function_stats));
      memcpy(s, &stats, sizeof stats);
      CHECK_OK(gj_function_get_stats(fn, s));
      CheckGuards(buf, sizeof(gj_function_stats), "gj_function_get_stats");
      CHECK(s->calls == 3 && s->hits == 2 && s->misses == 1,
            "stats: %d calls, %d hits, %d misses; expected 3, 2, 1",
            (int)s->calls, (int)s->hits, (int)s->misses);
    }
  }
#endif
#if GJ_API_VERSION_MINOR >= 5
  {
    gj_memory_stats mem;
    INIT_GUARDED(gj_memory_stats, gj_memory_stats_init, mem);
  }
#endif

done:
  gj_function_destroy(fn);
  gj_graph_destroy(graph);
  gj_context_destroy(ctx);
  if (failures != 0) {
    fprintf(stderr, "old header client 0.%d: %d checks failed\n",
            GJ_API_VERSION_MINOR, failures);
    return 1;
  }
  printf("old header client 0.%d: ok\n", GJ_API_VERSION_MINOR);
  return 0;
}
