/* What the library reports: memory, compile cache and function stats,
 * cache directories, explain, guard dumps, compile reports. */
#include "guardjit_jni.h"

#include <stdlib.h>

JNIEXPORT jlongArray JNICALL FN(contextMemoryStats)(JNIEnv* env, jclass cls,
                                                    jlong context) {
  gj_memory_stats stats;
  jlong values[8];
  jlongArray result;
  (void)cls;
  gj_memory_stats_init_v(&stats, sizeof stats);
  if (check(env, gj_context_get_memory_stats(HANDLE(gj_context, context),
                                             &stats))) {
    return NULL;
  }
  values[0] = stats.bytes_in_use;
  values[1] = stats.bytes_cached;
  values[2] = stats.peak_bytes_in_use;
  values[3] = stats.system_allocations;
  values[4] = stats.cache_hits;
  values[5] = stats.compiled_modules;
  values[6] = stats.cached_kernels;
  values[7] = stats.packed_weight_bytes;
  result = (*env)->NewLongArray(env, 8);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 8, values);
  return result;
}

/* gj_context_get_device_memory_stats (0.10) for {device_type, device_id},
 * as contextMemoryStats. */
JNIEXPORT jlongArray JNICALL FN(contextDeviceMemoryStats)(JNIEnv* env,
                                                          jclass cls,
                                                          jlong context,
                                                          jint device_type,
                                                          jint device_id) {
  gj_memory_stats stats;
  DLDevice device;
  jlong values[8];
  jlongArray result;
  (void)cls;
  device.device_type = (DLDeviceType)device_type;
  device.device_id = device_id;
  gj_memory_stats_init_v(&stats, sizeof stats);
  if (check(env, gj_context_get_device_memory_stats(
                     HANDLE(gj_context, context), device, &stats))) {
    return NULL;
  }
  values[0] = stats.bytes_in_use;
  values[1] = stats.bytes_cached;
  values[2] = stats.peak_bytes_in_use;
  values[3] = stats.system_allocations;
  values[4] = stats.cache_hits;
  values[5] = stats.compiled_modules;
  values[6] = stats.cached_kernels;
  values[7] = stats.packed_weight_bytes;
  result = (*env)->NewLongArray(env, 8);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 8, values);
  return result;
}

/* gj_context_get_compile_cache_stats (0.11), in CompileCacheStats.of's
 * order (the struct's). */
JNIEXPORT jlongArray JNICALL FN(contextCompileCacheStats)(JNIEnv* env,
                                                          jclass cls,
                                                          jlong context) {
  gj_compile_cache_stats stats;
  jlong values[13];
  jlongArray result;
  (void)cls;
  gj_compile_cache_stats_init_v(&stats, sizeof stats);
  if (check(env, gj_context_get_compile_cache_stats(
                     HANDLE(gj_context, context), &stats))) {
    return NULL;
  }
  values[0] = stats.kernels_compiled;
  values[1] = stats.kernels_loaded;
  values[2] = stats.disk_hits;
  values[3] = stats.disk_misses;
  values[4] = stats.disk_stores;
  values[5] = stats.remote_hits;
  values[6] = stats.remote_misses;
  values[7] = stats.remote_stores;
  values[8] = stats.lock_waits;
  values[9] = stats.lock_timeouts;
  values[10] = stats.rejected;
  values[11] = stats.errors;
  values[12] = stats.evictions;
  result = (*env)->NewLongArray(env, 13);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 13, values);
  return result;
}

/* gj_cache_dir_inspect (0.11): fills stats_out with [records, bytes,
 * oldest_use_ms, newest_use_ms, verified, bad, removed] and returns the
 * report. A null key is NULL. */
JNIEXPORT jstring JNICALL FN(cacheDirInspect)(JNIEnv* env, jclass cls,
                                              jstring dir, jstring key,
                                              jboolean verify,
                                              jboolean remove_bad,
                                              jlongArray stats_out) {
  gj_cache_dir_stats stats;
  char* cdir;
  char* ckey;
  char* report = NULL;
  gj_error* error;
  jlong values[8];
  (void)cls;
  if (utf8_dup(env, dir, &cdir) != 0) return NULL;
  if (utf8_dup(env, key, &ckey) != 0) {
    free(cdir);
    return NULL;
  }
  gj_cache_dir_stats_init_v(&stats, sizeof stats);
  error = gj_cache_dir_inspect(cdir, ckey, verify ? 1 : 0, remove_bad ? 1 : 0,
                               &stats, &report);
  free(cdir);
  free(ckey);
  if (check(env, error)) return NULL;
  values[0] = stats.records;
  values[1] = stats.bytes;
  values[2] = stats.oldest_use_ms;
  values[3] = stats.newest_use_ms;
  values[4] = stats.verified;
  values[5] = stats.bad;
  values[6] = stats.removed;
  (*env)->SetLongArrayRegion(env, stats_out, 0, 7, values);
  return take_string(env, report);
}

/* gj_cache_dir_clear (0.11): the files removed. */
JNIEXPORT jlong JNICALL FN(cacheDirClear)(JNIEnv* env, jclass cls,
                                          jstring dir) {
  char* cdir;
  int64_t removed = 0;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, dir, &cdir) != 0) return 0;
  error = gj_cache_dir_clear(cdir, &removed);
  free(cdir);
  if (check(env, error)) return 0;
  return (jlong)removed;
}

/* [calls, hits, misses, compiles, recompiles, fallback_calls,
 * cache_entries, compile_ms_total bits, guard_ns_mean bits, graph_count,
 * graph_break_count, cuda_graphs_recorded, cuda_graph_replays,
 * cuda_graph_pointer_updates, cuda_graph_recaptures, cuda_graph_evictions,
 * cuda_graph_pool_bytes, eager_while_compiling, entries_loaded]:
 * FunctionStats.of's order. */
JNIEXPORT jlongArray JNICALL FN(functionStats)(JNIEnv* env, jclass cls,
                                               jlong function) {
  gj_function_stats stats;
  jlong values[19];
  jlongArray result;
  union {
    double d;
    jlong l;
  } a, b;
  (void)cls;
  gj_function_stats_init_v(&stats, sizeof stats);
  if (check(env, gj_function_get_stats(HANDLE(gj_function, function), &stats))) {
    return NULL;
  }
  a.d = stats.compile_ms_total;
  b.d = stats.guard_ns_mean;
  values[0] = stats.calls;
  values[1] = stats.hits;
  values[2] = stats.misses;
  values[3] = stats.compiles;
  values[4] = stats.recompiles;
  values[5] = stats.fallback_calls;
  values[6] = stats.cache_entries;
  values[7] = a.l;
  values[8] = b.l;
  values[9] = stats.graph_count;
  values[10] = stats.graph_break_count;
  values[11] = stats.cuda_graphs_recorded;
  values[12] = stats.cuda_graph_replays;
  values[13] = stats.cuda_graph_pointer_updates;
  values[14] = stats.cuda_graph_recaptures;
  values[15] = stats.cuda_graph_evictions;
  values[16] = stats.cuda_graph_pool_bytes;
  values[17] = stats.eager_while_compiling;
  values[18] = stats.entries_loaded;
  result = (*env)->NewLongArray(env, 19);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 19, values);
  return result;
}

JNIEXPORT jstring JNICALL FN(functionExplain)(JNIEnv* env, jclass cls,
                                              jlong function) {
  char* text = NULL;
  (void)cls;
  if (check(env, gj_function_explain(HANDLE(gj_function, function), &text))) {
    return NULL;
  }
  return take_string(env, text);
}

JNIEXPORT jstring JNICALL FN(functionDumpGuards)(JNIEnv* env, jclass cls,
                                                 jlong function) {
  char* text = NULL;
  (void)cls;
  if (check(env,
            gj_function_dump_guards(HANDLE(gj_function, function), &text))) {
    return NULL;
  }
  return take_string(env, text);
}

/* Returns the report's text; check_out receives [checked, run_code,
 * max_abs_error as raw double bits, within_tolerance]. */
JNIEXPORT jstring JNICALL FN(graphCompileReport)(
    JNIEnv* env, jclass cls, jlong graph, jlongArray meta, jint num_inputs,
    jstring target, jboolean emulate, jlong seed, jlongArray check_out) {
  gj_compile_report_options options;
  gj_compile_check result;
  tensor_set inputs;
  char* ctarget;
  char* text = NULL;
  gj_error* error;
  jlong values[4];
  union {
    double d;
    jlong l;
  } bits;
  (void)cls;
  if (tensor_set_init(env, &inputs, meta, (size_t)num_inputs) != 0) {
    return NULL;
  }
  if (utf8_dup(env, target, &ctarget) != 0) {
    tensor_set_free(&inputs);
    return NULL;
  }
  gj_compile_report_options_init_v(&options, sizeof options);
  options.target = ctarget;
  options.emulate = emulate ? 1 : 0;
  options.seed = (uint64_t)seed;
  gj_compile_check_init_v(&result, sizeof result);
  error = gj_graph_compile_report(HANDLE(gj_graph, graph), inputs.pointers,
                                  inputs.count, &options, &text, &result);
  free(ctarget);
  tensor_set_free(&inputs);
  if (check(env, error)) return NULL;
  bits.d = result.max_abs_error;
  values[0] = result.checked;
  values[1] = (jlong)result.run_code;
  values[2] = bits.l;
  values[3] = result.within_tolerance;
  (*env)->SetLongArrayRegion(env, check_out, 0, 4, values);
  return take_string(env, text);
}
