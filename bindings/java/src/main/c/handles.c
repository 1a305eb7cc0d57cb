/* Contexts, graphs and functions: create, load, destroy, query. */
#include "guardjit_jni.h"

#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

/* Option values below are set only when their bit is in `mask`:
 * 1 num_threads, 2 backend, 4 max_cached_kernels, 8 max_cached_bytes,
 * 16 max_cache_bytes. */
/* The compile cache's strings (C API 0.11): a null String stays NULL, so the
 * library reads GJ_CACHE_DIR / GJ_CACHE_KEY / GJ_REMOTE_CACHE; "" is "". */
JNIEXPORT jlong JNICALL FN(contextCreate)(
    JNIEnv* env, jclass cls, jint num_threads, jint backend,
    jint max_cached_kernels, jlong max_cached_bytes, jint mask,
    jstring cache_dir, jlong max_cache_bytes, jstring cache_key,
    jstring remote_cache) {
  gj_context_options options;
  gj_context* context = NULL;
  char* cdir = NULL;
  char* ckey = NULL;
  char* cremote = NULL;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, cache_dir, &cdir) != 0 ||
      utf8_dup(env, cache_key, &ckey) != 0 ||
      utf8_dup(env, remote_cache, &cremote) != 0) {
    free(cdir);
    free(ckey);
    free(cremote);
    return 0;
  }
  gj_context_options_init_v(&options, sizeof options);
  if (mask & 1) options.num_threads = num_threads;
  if (mask & 2) options.backend = (gj_backend)backend;
  if (mask & 4) options.max_cached_kernels = max_cached_kernels;
  if (mask & 8) options.max_cached_bytes = max_cached_bytes;
  if (mask & 16) options.max_cache_bytes = max_cache_bytes;
  options.cache_dir = cdir;
  options.cache_key = ckey;
  options.remote_cache = cremote;
  error = gj_context_create(&options, &context);
  free(cdir);
  free(ckey);
  free(cremote);
  if (check(env, error)) return 0;
  return JLONG(context);
}

JNIEXPORT void JNICALL FN(contextDestroy)(JNIEnv* env, jclass cls,
                                          jlong context) {
  (void)env;
  (void)cls;
  gj_context_destroy(HANDLE(gj_context, context));
}

JNIEXPORT void JNICALL FN(contextReleaseCachedMemory)(JNIEnv* env, jclass cls,
                                                      jlong context) {
  (void)cls;
  check(env, gj_context_release_cached_memory(HANDLE(gj_context, context)));
}

JNIEXPORT void JNICALL FN(contextReleaseCachedDeviceMemory)(
    JNIEnv* env, jclass cls, jlong context, jint device_type, jint device_id) {
  DLDevice device;
  (void)cls;
  device.device_type = (DLDeviceType)device_type;
  device.device_id = device_id;
  check(env, gj_context_release_cached_device_memory(
                 HANDLE(gj_context, context), device));
}

/* ------------------------------------------------------------------------ */
/* Graphs                                                                    */

/* Load options with external_data_dir from `dir` (may be null). *dir_copy
 * must be freed. Returns -1 with an exception pending. */
static int load_options(JNIEnv* env, jstring dir, gj_graph_load_options* opts,
                        char** dir_copy) {
  gj_graph_load_options_init_v(opts, sizeof *opts);
  if (utf8_dup(env, dir, dir_copy) != 0) return -1;
  opts->external_data_dir = *dir_copy;
  return 0;
}

JNIEXPORT jlong JNICALL FN(graphFromFile)(JNIEnv* env, jclass cls,
                                          jlong context, jstring path,
                                          jstring dir) {
  gj_graph_load_options options;
  gj_graph* graph = NULL;
  char *cpath, *cdir;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, path, &cpath) != 0) return 0;
  if (load_options(env, dir, &options, &cdir) != 0) {
    free(cpath);
    return 0;
  }
  error = gj_graph_from_file(HANDLE(gj_context, context), cpath, &options,
                             &graph);
  free(cpath);
  free(cdir);
  if (check(env, error)) return 0;
  return JLONG(graph);
}

/* text != 0: protobuf text format, else binary. */
JNIEXPORT jlong JNICALL FN(graphFromBytes)(JNIEnv* env, jclass cls,
                                           jlong context, jbyteArray data,
                                           jboolean text, jstring dir) {
  gj_graph_load_options options;
  gj_graph* graph = NULL;
  gj_error* error;
  char* cdir;
  jsize len = (*env)->GetArrayLength(env, data);
  char* copy;
  (void)cls;
  /* A copy (not GetPrimitiveArrayCritical): loading can take a while and
   * must not hold off the garbage collector. */
  copy = (char*)malloc(len > 0 ? (size_t)len : 1);
  if (copy == NULL) {
    throw_oom(env);
    return 0;
  }
  (*env)->GetByteArrayRegion(env, data, 0, len, (jbyte*)copy);
  if (load_options(env, dir, &options, &cdir) != 0) {
    free(copy);
    return 0;
  }
  if (text) {
    error = gj_graph_from_text(HANDLE(gj_context, context), copy, (size_t)len,
                               &options, &graph);
  } else {
    error = gj_graph_from_proto(HANDLE(gj_context, context), copy, (size_t)len,
                                &options, &graph);
  }
  free(copy);
  free(cdir);
  if (check(env, error)) return 0;
  return JLONG(graph);
}

JNIEXPORT void JNICALL FN(graphDestroy)(JNIEnv* env, jclass cls, jlong graph) {
  (void)env;
  (void)cls;
  gj_graph_destroy(HANDLE(gj_graph, graph));
}

JNIEXPORT jint JNICALL FN(graphNumInputs)(JNIEnv* env, jclass cls,
                                          jlong graph) {
  (void)env;
  (void)cls;
  return (jint)gj_graph_num_inputs(HANDLE(gj_graph, graph));
}

JNIEXPORT jint JNICALL FN(graphNumOutputs)(JNIEnv* env, jclass cls,
                                           jlong graph) {
  (void)env;
  (void)cls;
  return (jint)gj_graph_num_outputs(HANDLE(gj_graph, graph));
}

JNIEXPORT jstring JNICALL FN(graphInputName)(JNIEnv* env, jclass cls,
                                             jlong graph, jint index) {
  (void)cls;
  if (index < 0) return NULL;
  return new_string(env,
                    gj_graph_input_name(HANDLE(gj_graph, graph), (size_t)index));
}

JNIEXPORT jstring JNICALL FN(graphOutputName)(JNIEnv* env, jclass cls,
                                              jlong graph, jint index) {
  (void)cls;
  if (index < 0) return NULL;
  return new_string(
      env, gj_graph_output_name(HANDLE(gj_graph, graph), (size_t)index));
}

JNIEXPORT jint JNICALL FN(graphIoDtype)(JNIEnv* env, jclass cls, jlong graph,
                                        jboolean input, jint index) {
  (void)env;
  (void)cls;
  if (index < 0) return 0;
  const gj_graph* g = HANDLE(gj_graph, graph);
  return (jint)(input ? gj_graph_input_dtype(g, (size_t)index)
                      : gj_graph_output_dtype(g, (size_t)index));
}

JNIEXPORT jlong JNICALL FN(graphIoRank)(JNIEnv* env, jclass cls, jlong graph,
                                        jboolean input, jint index) {
  (void)env;
  (void)cls;
  if (index < 0) return -1;
  const gj_graph* g = HANDLE(gj_graph, graph);
  return input ? gj_graph_input_rank(g, (size_t)index)
               : gj_graph_output_rank(g, (size_t)index);
}

JNIEXPORT jlong JNICALL FN(graphIoDim)(JNIEnv* env, jclass cls, jlong graph,
                                       jboolean input, jint index, jint dim) {
  (void)env;
  (void)cls;
  if (index < 0 || dim < 0) return -1;
  const gj_graph* g = HANDLE(gj_graph, graph);
  return input ? gj_graph_input_dim(g, (size_t)index, (size_t)dim)
               : gj_graph_output_dim(g, (size_t)index, (size_t)dim);
}

JNIEXPORT jstring JNICALL FN(graphIoDimSymbol)(JNIEnv* env, jclass cls,
                                               jlong graph, jboolean input,
                                               jint index, jint dim) {
  (void)cls;
  if (index < 0 || dim < 0) return NULL;
  const gj_graph* g = HANDLE(gj_graph, graph);
  const char* symbol =
      input ? gj_graph_input_dim_symbol(g, (size_t)index, (size_t)dim)
            : gj_graph_output_dim_symbol(g, (size_t)index, (size_t)dim);
  return symbol == NULL ? NULL : new_string(env, symbol);
}

JNIEXPORT jstring JNICALL FN(graphToTabular)(JNIEnv* env, jclass cls,
                                             jlong graph) {
  char* text = NULL;
  (void)cls;
  if (check(env, gj_graph_to_tabular(HANDLE(gj_graph, graph), &text))) {
    return NULL;
  }
  return take_string(env, text);
}

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */

/* mark_dynamic: groups of four longs (input, dim, min, max). The modes are
 * passed through unchecked: the library names an unknown one. */
JNIEXPORT jlong JNICALL FN(functionCreate)(
    JNIEnv* env, jclass cls, jlong context, jlong graph, jstring name,
    jint recompile_limit, jboolean has_recompile_limit, jint dynamic,
    jlongArray mark_dynamic, jboolean fullgraph, jint mode,
    jint max_graphs_per_entry, jint compile) {
  gj_function_options options;
  gj_function* function = NULL;
  gj_dynamic_dim* dims = NULL;
  char* cname;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, name, &cname) != 0) return 0;
  gj_function_options_init_v(&options, sizeof options);
  options.name = cname;
  if (has_recompile_limit) options.recompile_limit = recompile_limit;
  options.dynamic = (gj_dynamic_mode)dynamic;
  options.fullgraph = fullgraph ? 1 : 0;
  options.mode = (gj_function_mode)mode;
  options.max_graphs_per_entry = max_graphs_per_entry;
  options.compile = (gj_compile_mode)compile;
  if (mark_dynamic != NULL) {
    jsize len = (*env)->GetArrayLength(env, mark_dynamic);
    size_t count = (size_t)len / 4, i;
    jlong* values = (jlong*)malloc(len > 0 ? (size_t)len * sizeof(jlong) : 1);
    dims = (gj_dynamic_dim*)calloc(count > 0 ? count : 1, sizeof(*dims));
    if (values == NULL || dims == NULL) {
      free(values);
      free(dims);
      free(cname);
      throw_oom(env);
      return 0;
    }
    (*env)->GetLongArrayRegion(env, mark_dynamic, 0, len, values);
    for (i = 0; i < count; ++i) {
      dims[i].input = (int32_t)values[4 * i];
      dims[i].dim = (int32_t)values[4 * i + 1];
      dims[i].min = values[4 * i + 2];
      dims[i].max = values[4 * i + 3];
    }
    free(values);
    options.mark_dynamic = dims;
    options.num_mark_dynamic = count;
    options.mark_dynamic_stride = sizeof(gj_dynamic_dim);
  }
  error = gj_function_create(HANDLE(gj_context, context),
                             HANDLE(gj_graph, graph), &options, &function);
  free(dims);
  free(cname);
  if (check(env, error)) return 0;
  return JLONG(function);
}

JNIEXPORT void JNICALL FN(functionDestroy)(JNIEnv* env, jclass cls,
                                           jlong function) {
  (void)env;
  (void)cls;
  gj_function_destroy(HANDLE(gj_function, function));
}

JNIEXPORT jint JNICALL FN(functionNumInputs)(JNIEnv* env, jclass cls,
                                             jlong function) {
  (void)env;
  (void)cls;
  return (jint)gj_function_num_inputs(HANDLE(gj_function, function));
}

JNIEXPORT jint JNICALL FN(functionNumOutputs)(JNIEnv* env, jclass cls,
                                              jlong function) {
  (void)env;
  (void)cls;
  return (jint)gj_function_num_outputs(HANDLE(gj_function, function));
}
