// The C ABI's struct layouts, checked at build time (LP64: Linux x86_64 and
// aarch64). Options structs only grow at the end: a field inserted or
// reordered by mistake changes an offset below and fails the build, before
// it can break a host built against an older header.

#include <cstddef>

#include "guardjit/guardjit.h"

#define GJ_OFFSET(type, field, offset)             \
  static_assert(offsetof(type, field) == (offset), \
                #type "." #field " moved: fields are only appended")

static_assert(sizeof(void*) == 8, "the offsets below are for LP64");

GJ_OFFSET(gj_context_options, struct_size, 0);
GJ_OFFSET(gj_context_options, num_threads, 8);
GJ_OFFSET(gj_context_options, backend, 12);
GJ_OFFSET(gj_context_options, max_cached_kernels, 16);
GJ_OFFSET(gj_context_options, max_cached_bytes, 24);
GJ_OFFSET(gj_context_options, cache_dir, 32);
GJ_OFFSET(gj_context_options, max_cache_bytes, 40);
GJ_OFFSET(gj_context_options, cache_key, 48);
GJ_OFFSET(gj_context_options, remote_cache, 56);

GJ_OFFSET(gj_memory_stats, struct_size, 0);
GJ_OFFSET(gj_memory_stats, bytes_in_use, 8);
GJ_OFFSET(gj_memory_stats, bytes_cached, 16);
GJ_OFFSET(gj_memory_stats, peak_bytes_in_use, 24);
GJ_OFFSET(gj_memory_stats, system_allocations, 32);
GJ_OFFSET(gj_memory_stats, cache_hits, 40);
GJ_OFFSET(gj_memory_stats, compiled_modules, 48);
GJ_OFFSET(gj_memory_stats, cached_kernels, 56);
GJ_OFFSET(gj_memory_stats, packed_weight_bytes, 64);

GJ_OFFSET(gj_graph_load_options, struct_size, 0);
GJ_OFFSET(gj_graph_load_options, external_data_dir, 8);
GJ_OFFSET(gj_graph_load_options, format, 16);

GJ_OFFSET(gj_arg, kind, 0);
GJ_OFFSET(gj_arg, name, 8);
GJ_OFFSET(gj_arg, i, 16);
GJ_OFFSET(gj_arg, f, 24);
GJ_OFFSET(gj_arg, str, 32);
GJ_OFFSET(gj_arg, dtype, 40);
GJ_OFFSET(gj_arg, ints, 48);
GJ_OFFSET(gj_arg, floats, 56);
GJ_OFFSET(gj_arg, refs, 64);
GJ_OFFSET(gj_arg, len, 72);
static_assert(sizeof(gj_arg) == 80, "gj_arg arrays: element size is ABI");

GJ_OFFSET(gj_dynamic_dim, input, 0);
GJ_OFFSET(gj_dynamic_dim, dim, 4);
GJ_OFFSET(gj_dynamic_dim, min, 8);
GJ_OFFSET(gj_dynamic_dim, max, 16);
static_assert(sizeof(gj_dynamic_dim) == 24,
              "gj_dynamic_dim arrays: element size is ABI");

GJ_OFFSET(gj_function_options, struct_size, 0);
GJ_OFFSET(gj_function_options, name, 8);
GJ_OFFSET(gj_function_options, recompile_limit, 16);
GJ_OFFSET(gj_function_options, dynamic, 20);
GJ_OFFSET(gj_function_options, mark_dynamic, 24);
GJ_OFFSET(gj_function_options, num_mark_dynamic, 32);
GJ_OFFSET(gj_function_options, fullgraph, 40);
GJ_OFFSET(gj_function_options, mode, 44);
GJ_OFFSET(gj_function_options, max_graphs_per_entry, 48);
GJ_OFFSET(gj_function_options, compile, 52);
GJ_OFFSET(gj_function_options, mark_dynamic_stride, 56);

GJ_OFFSET(gj_call_options, struct_size, 0);
GJ_OFFSET(gj_call_options, grad_mode, 8);
GJ_OFFSET(gj_call_options, deterministic, 12);
GJ_OFFSET(gj_call_options, requires_grad, 16);
GJ_OFFSET(gj_call_options, cancel, 24);
GJ_OFFSET(gj_call_options, timeout_us, 32);
GJ_OFFSET(gj_call_options, stream, 40);
GJ_OFFSET(gj_call_options, synchronize, 48);

GJ_OFFSET(gj_function_stats, struct_size, 0);
GJ_OFFSET(gj_function_stats, calls, 8);
GJ_OFFSET(gj_function_stats, hits, 16);
GJ_OFFSET(gj_function_stats, misses, 24);
GJ_OFFSET(gj_function_stats, compiles, 32);
GJ_OFFSET(gj_function_stats, recompiles, 40);
GJ_OFFSET(gj_function_stats, fallback_calls, 48);
GJ_OFFSET(gj_function_stats, cache_entries, 56);
GJ_OFFSET(gj_function_stats, compile_ms_total, 64);
GJ_OFFSET(gj_function_stats, guard_ns_mean, 72);
GJ_OFFSET(gj_function_stats, graph_count, 80);
GJ_OFFSET(gj_function_stats, graph_break_count, 88);
GJ_OFFSET(gj_function_stats, cuda_graphs_recorded, 96);
GJ_OFFSET(gj_function_stats, cuda_graph_replays, 104);
GJ_OFFSET(gj_function_stats, cuda_graph_pointer_updates, 112);
GJ_OFFSET(gj_function_stats, cuda_graph_recaptures, 120);
GJ_OFFSET(gj_function_stats, cuda_graph_evictions, 128);
GJ_OFFSET(gj_function_stats, cuda_graph_pool_bytes, 136);
GJ_OFFSET(gj_function_stats, eager_while_compiling, 144);
GJ_OFFSET(gj_function_stats, entries_loaded, 152);

GJ_OFFSET(gj_compile_cache_stats, struct_size, 0);
GJ_OFFSET(gj_compile_cache_stats, kernels_compiled, 8);
GJ_OFFSET(gj_compile_cache_stats, kernels_loaded, 16);
GJ_OFFSET(gj_compile_cache_stats, disk_hits, 24);
GJ_OFFSET(gj_compile_cache_stats, disk_misses, 32);
GJ_OFFSET(gj_compile_cache_stats, disk_stores, 40);
GJ_OFFSET(gj_compile_cache_stats, remote_hits, 48);
GJ_OFFSET(gj_compile_cache_stats, remote_misses, 56);
GJ_OFFSET(gj_compile_cache_stats, remote_stores, 64);
GJ_OFFSET(gj_compile_cache_stats, lock_waits, 72);
GJ_OFFSET(gj_compile_cache_stats, lock_timeouts, 80);
GJ_OFFSET(gj_compile_cache_stats, rejected, 88);
GJ_OFFSET(gj_compile_cache_stats, errors, 96);
GJ_OFFSET(gj_compile_cache_stats, evictions, 104);

GJ_OFFSET(gj_compile_report_options, struct_size, 0);
GJ_OFFSET(gj_compile_report_options, target, 8);
GJ_OFFSET(gj_compile_report_options, emulate, 16);
GJ_OFFSET(gj_compile_report_options, seed, 24);

GJ_OFFSET(gj_compile_check, struct_size, 0);
GJ_OFFSET(gj_compile_check, checked, 8);
GJ_OFFSET(gj_compile_check, run_code, 12);
GJ_OFFSET(gj_compile_check, max_abs_error, 16);
GJ_OFFSET(gj_compile_check, within_tolerance, 24);
