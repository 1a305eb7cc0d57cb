/*
 * JNI glue between dev.guardjit.Native and the guardjit C API.
 *
 * Every function here is a thin translation: Java passes raw handles as
 * jlong, tensors as a direct ByteBuffer (or a NULL data pointer) plus a
 * packed long[] of metadata, and strings as java.lang.String (converted to
 * and from real UTF-8, not JNI's modified UTF-8). A gj_error becomes a
 * pending dev.guardjit.GuardjitException(code, message) and the function
 * returns a zero value; Java never sees a gj_error pointer. Lifetimes (who
 * may destroy what, and when) are enforced on the Java side.
 *
 * Packed tensor metadata, one record per tensor, in a long[]:
 *   [address, byte_offset, dl_code, dl_bits, ndim, shape[ndim],
 *    has_strides, strides[ndim] if has_strides]
 * `address` is the data pointer (0 = NULL, for metadata-only calls such as
 * precompile): a direct ByteBuffer's address, resolved once when the Java
 * Tensor is made (Native.bufferAddress), the Java side keeping the buffer
 * reachable across the call. A call thus crosses JNI with one long[] read.
 */
#include <guardjit/guardjit.h>
#include <jni.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Cached classes and method ids (filled in JNI_OnLoad)                      */

static JavaVM* g_vm;
static jclass g_exception_class;   /* dev.guardjit.GuardjitException */
static jmethodID g_exception_ctor; /* (int, String) */
static jclass g_string_class;
static jmethodID g_string_ctor;     /* String(byte[], Charset) */
static jmethodID g_string_get_bytes; /* String.getBytes(Charset) */
static jobject g_utf8;              /* StandardCharsets.UTF_8 */
static jclass g_object_class;
static jmethodID g_log_accept; /* LogHandler.log(String, String) */

/* The Java log handler, a global ref guarded by g_log_mutex. */
static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static jobject g_log_handler;
static pthread_key_t g_detach_key;

static jclass global_class(JNIEnv* env, const char* name) {
  jclass local = (*env)->FindClass(env, name);
  jclass global;
  if (local == NULL) return NULL;
  global = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  return global;
}

/* Threads the log callback attached to the VM detach when they exit. */
static void detach_thread(void* unused) {
  (void)unused;
  if (g_vm != NULL) (*g_vm)->DetachCurrentThread(g_vm);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  JNIEnv* env;
  jclass charsets, handler;
  jfieldID utf8_field;
  jobject utf8;
  (void)reserved;
  g_vm = vm;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_8) != JNI_OK) {
    return JNI_ERR;
  }
  g_exception_class = global_class(env, "dev/guardjit/GuardjitException");
  if (g_exception_class == NULL) return JNI_ERR;
  g_exception_ctor = (*env)->GetMethodID(env, g_exception_class, "<init>",
                                         "(ILjava/lang/String;)V");
  g_string_class = global_class(env, "java/lang/String");
  g_object_class = global_class(env, "java/lang/Object");
  if (g_exception_ctor == NULL || g_string_class == NULL ||
      g_object_class == NULL) {
    return JNI_ERR;
  }
  g_string_ctor = (*env)->GetMethodID(env, g_string_class, "<init>",
                                      "([BLjava/nio/charset/Charset;)V");
  g_string_get_bytes = (*env)->GetMethodID(
      env, g_string_class, "getBytes", "(Ljava/nio/charset/Charset;)[B");
  charsets = (*env)->FindClass(env, "java/nio/charset/StandardCharsets");
  if (g_string_ctor == NULL || g_string_get_bytes == NULL || charsets == NULL) {
    return JNI_ERR;
  }
  utf8_field = (*env)->GetStaticFieldID(env, charsets, "UTF_8",
                                        "Ljava/nio/charset/Charset;");
  if (utf8_field == NULL) return JNI_ERR;
  utf8 = (*env)->GetStaticObjectField(env, charsets, utf8_field);
  g_utf8 = (*env)->NewGlobalRef(env, utf8);
  (*env)->DeleteLocalRef(env, utf8);
  (*env)->DeleteLocalRef(env, charsets);
  handler = (*env)->FindClass(env, "dev/guardjit/LogHandler");
  if (handler == NULL) return JNI_ERR;
  g_log_accept = (*env)->GetMethodID(env, handler, "log",
                                     "(Ljava/lang/String;Ljava/lang/String;)V");
  (*env)->DeleteLocalRef(env, handler);
  if (g_log_accept == NULL || g_utf8 == NULL) return JNI_ERR;
  if (pthread_key_create(&g_detach_key, detach_thread) != 0) return JNI_ERR;
  return JNI_VERSION_1_8;
}

/* ------------------------------------------------------------------------ */
/* Exceptions and strings                                                   */

static void throw_named(JNIEnv* env, const char* class_name,
                        const char* message) {
  jclass cls = (*env)->FindClass(env, class_name);
  if (cls != NULL) {
    (*env)->ThrowNew(env, cls, message);
    (*env)->DeleteLocalRef(env, cls);
  }
}

static void throw_oom(JNIEnv* env) {
  throw_named(env, "java/lang/OutOfMemoryError", "guardjit JNI: malloc failed");
}

/* A java.lang.String from UTF-8 bytes (JNI's NewStringUTF expects modified
 * UTF-8, which differs for NUL and characters past the BMP). NULL on
 * failure, with an exception pending. */
static jstring new_string(JNIEnv* env, const char* text) {
  jsize len;
  jbyteArray bytes;
  jstring result;
  if (text == NULL) return NULL;
  len = (jsize)strlen(text);
  bytes = (*env)->NewByteArray(env, len);
  if (bytes == NULL) return NULL;
  (*env)->SetByteArrayRegion(env, bytes, 0, len, (const jbyte*)text);
  result = (jstring)(*env)->NewObject(env, g_string_class, g_string_ctor,
                                      bytes, g_utf8);
  if ((*env)->ExceptionCheck(env)) result = NULL;
  (*env)->DeleteLocalRef(env, bytes);
  return result;
}

/* Throws GuardjitException(code, message) for `error` and destroys it.
 * Returns 1 when there was an error. */
static int check(JNIEnv* env, gj_error* error) {
  jstring message;
  jobject exception;
  if (error == NULL) return 0;
  message = new_string(env, gj_error_message(error));
  if (message != NULL) {
    exception = (*env)->NewObject(env, g_exception_class, g_exception_ctor,
                                  (jint)gj_error_get_code(error), message);
    if (!(*env)->ExceptionCheck(env) && exception != NULL) {
      (*env)->Throw(env, (jthrowable)exception);
    }
    (*env)->DeleteLocalRef(env, exception);
    (*env)->DeleteLocalRef(env, message);
  }
  gj_error_destroy(error);
  return 1;
}

/* A NUL-terminated UTF-8 copy of `str` in *out (NULL for a null String);
 * free() it. Returns 0, or -1 with an exception pending (embedded NUL, no
 * memory). */
static int utf8_dup(JNIEnv* env, jstring str, char** out) {
  jbyteArray bytes;
  jsize len;
  char* copy;
  *out = NULL;
  if (str == NULL) return 0;
  bytes = (jbyteArray)(*env)->CallObjectMethod(env, str, g_string_get_bytes,
                                               g_utf8);
  if ((*env)->ExceptionCheck(env) || bytes == NULL) return -1;
  len = (*env)->GetArrayLength(env, bytes);
  copy = (char*)malloc((size_t)len + 1);
  if (copy == NULL) {
    (*env)->DeleteLocalRef(env, bytes);
    throw_oom(env);
    return -1;
  }
  (*env)->GetByteArrayRegion(env, bytes, 0, len, (jbyte*)copy);
  (*env)->DeleteLocalRef(env, bytes);
  copy[len] = '\0';
  if (memchr(copy, '\0', (size_t)len) != NULL) {
    free(copy);
    throw_named(env, "java/lang/IllegalArgumentException",
                "string contains a NUL character");
    return -1;
  }
  *out = copy;
  return 0;
}

/* Returns a library-allocated string as a Java String and frees it. */
static jstring take_string(JNIEnv* env, char* text) {
  jstring result = new_string(env, text);
  gj_string_destroy(text);
  return result;
}

#define HANDLE(type, value) ((type*)(intptr_t)(value))
#define JLONG(ptr) ((jlong)(intptr_t)(ptr))
#define FN(name) Java_dev_guardjit_Native_##name

/* ------------------------------------------------------------------------ */
/* Tensors: packed metadata to DLTensor                                      */

/* The DLTensors of one call. Small calls live on the stack. */
enum { kInlineTensors = 8, kInlineMeta = 128 };

typedef struct tensor_set {
  DLTensor* tensors;
  const DLTensor** pointers;
  jlong* meta;
  size_t count;
  DLTensor inline_tensors[kInlineTensors];
  const DLTensor* inline_pointers[kInlineTensors];
  jlong inline_meta[kInlineMeta];
} tensor_set;

static void tensor_set_free(tensor_set* set) {
  if (set->tensors != set->inline_tensors) free(set->tensors);
  if (set->pointers != set->inline_pointers) free((void*)set->pointers);
  if (set->meta != set->inline_meta) free(set->meta);
}

/* Decodes `count` tensors from `meta`. Returns 0, or -1 with an exception
 * pending (the set is freed). */
static int tensor_set_init(JNIEnv* env, tensor_set* set, jlongArray meta_array,
                           size_t count) {
  jsize meta_len = meta_array ? (*env)->GetArrayLength(env, meta_array) : 0;
  size_t pos = 0, i;
  set->count = count;
  set->tensors = set->inline_tensors;
  set->pointers = set->inline_pointers;
  set->meta = set->inline_meta;
  if (count > kInlineTensors) {
    set->tensors = (DLTensor*)calloc(count, sizeof(DLTensor));
    set->pointers = (const DLTensor**)calloc(count, sizeof(DLTensor*));
  }
  if ((size_t)meta_len > kInlineMeta) {
    set->meta = (jlong*)malloc((size_t)meta_len * sizeof(jlong));
  }
  if (set->tensors == NULL || set->pointers == NULL || set->meta == NULL) {
    tensor_set_free(set);
    throw_oom(env);
    return -1;
  }
  if (meta_len > 0) {
    (*env)->GetLongArrayRegion(env, meta_array, 0, meta_len, set->meta);
  }
  for (i = 0; i < count; ++i) {
    DLTensor* t = &set->tensors[i];
    int64_t ndim;
    if (pos + 6 > (size_t)meta_len) goto malformed;
    t->data = (void*)(intptr_t)set->meta[pos];
    t->byte_offset = (uint64_t)set->meta[pos + 1];
    t->dtype.code = (uint8_t)set->meta[pos + 2];
    t->dtype.bits = (uint8_t)set->meta[pos + 3];
    t->dtype.lanes = 1;
    t->device.device_type = kDLCPU;
    t->device.device_id = 0;
    ndim = set->meta[pos + 4];
    if (ndim < 0 || ndim > INT_MAX ||
        pos + 6 + (size_t)ndim > (size_t)meta_len) {
      goto malformed;
    }
    t->ndim = (int)ndim;
    t->shape = (int64_t*)&set->meta[pos + 5];
    pos += 5 + (size_t)ndim;
    if (set->meta[pos++] != 0) {
      if (pos + (size_t)ndim > (size_t)meta_len) goto malformed;
      t->strides = (int64_t*)&set->meta[pos];
      pos += (size_t)ndim;
    } else {
      t->strides = NULL;
    }
    set->pointers[i] = t;
  }
  return 0;
malformed:
  tensor_set_free(set);
  throw_named(env, "java/lang/IllegalArgumentException",
              "guardjit JNI: malformed tensor metadata");
  return -1;
}

/* The address of a direct ByteBuffer (0 for a heap buffer). */
JNIEXPORT jlong JNICALL FN(bufferAddress)(JNIEnv* env, jclass cls,
                                          jobject buffer) {
  (void)cls;
  return JLONG((*env)->GetDirectBufferAddress(env, buffer));
}

/* ------------------------------------------------------------------------ */
/* Version and logging                                                      */

JNIEXPORT jstring JNICALL FN(version)(JNIEnv* env, jclass cls) {
  (void)cls;
  return new_string(env, gj_version());
}

JNIEXPORT jint JNICALL FN(apiVersion)(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return (jint)gj_api_version();
}

JNIEXPORT void JNICALL FN(setLogTopics)(JNIEnv* env, jclass cls, jstring spec) {
  char* text;
  (void)cls;
  if (utf8_dup(env, spec, &text) != 0) return;
  gj_set_log_topics(text != NULL ? text : "");
  free(text);
}

/* Runs on whichever thread logs: attaches it to the VM if it is not (as a
 * daemon, detached when the thread exits) and calls the handler. An
 * exception the handler throws is cleared: there is no caller to take it. */
static void log_callback(void* user_data, const char* topic,
                         const char* message) {
  JNIEnv* env = NULL;
  jobject handler;
  jstring jtopic, jmessage;
  (void)user_data;
  if ((*g_vm)->GetEnv(g_vm, (void**)&env, JNI_VERSION_1_8) == JNI_EDETACHED) {
    if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void**)&env, NULL) !=
        JNI_OK) {
      return;
    }
    pthread_setspecific(g_detach_key, (void*)1);
  }
  if (env == NULL) return;
  if ((*env)->PushLocalFrame(env, 8) != 0) {
    (*env)->ExceptionClear(env);
    return;
  }
  pthread_mutex_lock(&g_log_mutex);
  handler = g_log_handler ? (*env)->NewLocalRef(env, g_log_handler) : NULL;
  pthread_mutex_unlock(&g_log_mutex);
  if (handler != NULL) {
    /* A call that logs may have an exception pending (none of ours do:
     * guardjit logs from inside C calls, before we throw). Keep it. */
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) (*env)->ExceptionClear(env);
    jtopic = new_string(env, topic);
    jmessage = jtopic != NULL ? new_string(env, message) : NULL;
    if (jmessage != NULL) {
      (*env)->CallVoidMethod(env, handler, g_log_accept, jtopic, jmessage);
    }
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (pending != NULL) (*env)->Throw(env, pending);
  }
  (*env)->PopLocalFrame(env, NULL);
}

JNIEXPORT void JNICALL FN(setLogHandler)(JNIEnv* env, jclass cls,
                                         jobject handler) {
  jobject old;
  (void)cls;
  if (handler != NULL) {
    jobject global = (*env)->NewGlobalRef(env, handler);
    if (global == NULL) return;
    pthread_mutex_lock(&g_log_mutex);
    old = g_log_handler;
    g_log_handler = global;
    pthread_mutex_unlock(&g_log_mutex);
    gj_set_log_callback(log_callback, NULL);
  } else {
    gj_set_log_callback(NULL, NULL);
    pthread_mutex_lock(&g_log_mutex);
    old = g_log_handler;
    g_log_handler = NULL;
    pthread_mutex_unlock(&g_log_mutex);
  }
  if (old != NULL) (*env)->DeleteGlobalRef(env, old);
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

/* Option values below are set only when their bit is in `mask`:
 * 1 num_threads, 2 backend, 4 max_cached_kernels, 8 max_cached_bytes. */
JNIEXPORT jlong JNICALL FN(contextCreate)(JNIEnv* env, jclass cls,
                                          jint num_threads, jint backend,
                                          jint max_cached_kernels,
                                          jlong max_cached_bytes, jint mask) {
  gj_context_options options;
  gj_context* context = NULL;
  (void)cls;
  gj_context_options_init_v(&options, sizeof options);
  if (mask & 1) options.num_threads = num_threads;
  if (mask & 2) options.backend = (gj_backend)backend;
  if (mask & 4) options.max_cached_kernels = max_cached_kernels;
  if (mask & 8) options.max_cached_bytes = max_cached_bytes;
  if (check(env, gj_context_create(&options, &context))) return 0;
  return JLONG(context);
}

JNIEXPORT void JNICALL FN(contextDestroy)(JNIEnv* env, jclass cls,
                                          jlong context) {
  (void)env;
  (void)cls;
  gj_context_destroy(HANDLE(gj_context, context));
}

JNIEXPORT jlongArray JNICALL FN(contextMemoryStats)(JNIEnv* env, jclass cls,
                                                    jlong context) {
  gj_memory_stats stats;
  jlong values[7];
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
  result = (*env)->NewLongArray(env, 7);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 7, values);
  return result;
}

JNIEXPORT void JNICALL FN(contextReleaseCachedMemory)(JNIEnv* env, jclass cls,
                                                      jlong context) {
  (void)cls;
  check(env, gj_context_release_cached_memory(HANDLE(gj_context, context)));
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

JNIEXPORT jstring JNICALL FN(graphToTabular)(JNIEnv* env, jclass cls,
                                             jlong graph) {
  char* text = NULL;
  (void)cls;
  if (check(env, gj_graph_to_tabular(HANDLE(gj_graph, graph), &text))) {
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

/* ------------------------------------------------------------------------ */
/* Graph builder                                                             */

JNIEXPORT jlong JNICALL FN(builderCreate)(JNIEnv* env, jclass cls,
                                          jlong context, jstring name) {
  gj_graph_builder* builder = NULL;
  char* cname;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, name, &cname) != 0) return 0;
  error = gj_graph_builder_create(HANDLE(gj_context, context), cname, &builder);
  free(cname);
  if (check(env, error)) return 0;
  return JLONG(builder);
}

JNIEXPORT void JNICALL FN(builderDestroy)(JNIEnv* env, jclass cls,
                                          jlong builder) {
  (void)env;
  (void)cls;
  gj_graph_builder_destroy(HANDLE(gj_graph_builder, builder));
}

JNIEXPORT void JNICALL FN(builderAddInput)(JNIEnv* env, jclass cls,
                                           jlong builder, jstring name) {
  char* cname;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, name, &cname) != 0) return;
  error = gj_graph_builder_add_input(HANDLE(gj_graph_builder, builder), cname);
  free(cname);
  check(env, error);
}

JNIEXPORT void JNICALL FN(builderAddConstant)(JNIEnv* env, jclass cls,
                                              jlong builder, jstring name,
                                              jlongArray meta) {
  tensor_set value;
  char* cname;
  gj_error* error;
  (void)cls;
  if (utf8_dup(env, name, &cname) != 0) return;
  if (tensor_set_init(env, &value, meta, 1) != 0) {
    free(cname);
    return;
  }
  error = gj_graph_builder_add_constant(HANDLE(gj_graph_builder, builder),
                                        cname, value.pointers[0]);
  tensor_set_free(&value);
  free(cname);
  check(env, error);
}

/* Strings of one add_node call, freed together. */
typedef struct string_pool {
  char** items;
  size_t count, capacity;
} string_pool;

static void pool_free(string_pool* pool) {
  size_t i;
  for (i = 0; i < pool->count; ++i) free(pool->items[i]);
  free(pool->items);
}

/* Converts `str` and keeps it in the pool; -1 with an exception pending. */
static int pool_add(JNIEnv* env, string_pool* pool, jstring str, char** out) {
  if (utf8_dup(env, str, out) != 0) return -1;
  if (*out == NULL) return 0;
  if (pool->count == pool->capacity) {
    size_t capacity = pool->capacity ? pool->capacity * 2 : 16;
    char** items = (char**)realloc(pool->items, capacity * sizeof(char*));
    if (items == NULL) {
      free(*out);
      throw_oom(env);
      return -1;
    }
    pool->items = items;
    pool->capacity = capacity;
  }
  pool->items[pool->count++] = *out;
  return 0;
}

static int pool_add_element(JNIEnv* env, string_pool* pool, jobjectArray array,
                            jsize index, char** out) {
  jstring str = (jstring)(*env)->GetObjectArrayElement(env, array, index);
  int rc = pool_add(env, pool, str, out);
  (*env)->DeleteLocalRef(env, str);
  return rc;
}

/* One argument per index of the parallel arrays: kinds[k] (gj_arg_kind),
 * names[k] (keyword or null), ints[k], floats[k], strs[k], dtypes[k], and
 * lists[k]: a long[] (INT_LIST), double[] (FLOAT_LIST) or String[]
 * (REF_LIST), else null. */
JNIEXPORT void JNICALL FN(builderAddNode)(
    JNIEnv* env, jclass cls, jlong builder, jstring name, jstring target,
    jintArray kinds, jobjectArray names, jlongArray ints, jdoubleArray floats,
    jobjectArray strs, jintArray dtypes, jobjectArray lists) {
  jsize n = (*env)->GetArrayLength(env, kinds), k;
  string_pool pool = {NULL, 0, 0};
  gj_arg* args = NULL;
  jint* ckinds = NULL;
  jint* cdtypes = NULL;
  jlong* cints = NULL;
  jdouble* cfloats = NULL;
  void** list_data = NULL; /* int64_t*, double* or const char** per arg */
  char *cname = NULL, *ctarget = NULL;
  (void)cls;
  if (pool_add(env, &pool, name, &cname) != 0 ||
      pool_add(env, &pool, target, &ctarget) != 0) {
    goto done;
  }
  args = (gj_arg*)calloc(n > 0 ? (size_t)n : 1, sizeof(gj_arg));
  list_data = (void**)calloc(n > 0 ? (size_t)n : 1, sizeof(void*));
  ckinds = (jint*)malloc((n > 0 ? (size_t)n : 1) * sizeof(jint));
  cdtypes = (jint*)malloc((n > 0 ? (size_t)n : 1) * sizeof(jint));
  cints = (jlong*)malloc((n > 0 ? (size_t)n : 1) * sizeof(jlong));
  cfloats = (jdouble*)malloc((n > 0 ? (size_t)n : 1) * sizeof(jdouble));
  if (!args || !list_data || !ckinds || !cdtypes || !cints || !cfloats) {
    throw_oom(env);
    goto done;
  }
  (*env)->GetIntArrayRegion(env, kinds, 0, n, ckinds);
  (*env)->GetIntArrayRegion(env, dtypes, 0, n, cdtypes);
  (*env)->GetLongArrayRegion(env, ints, 0, n, cints);
  (*env)->GetDoubleArrayRegion(env, floats, 0, n, cfloats);
  if ((*env)->ExceptionCheck(env)) goto done;
  for (k = 0; k < n; ++k) {
    gj_arg* a = &args[k];
    char* kw = NULL;
    char* str = NULL;
    jobject list;
    a->kind = (gj_arg_kind)ckinds[k];
    a->i = cints[k];
    a->f = cfloats[k];
    a->dtype = (gj_dtype)cdtypes[k];
    if (pool_add_element(env, &pool, names, k, &kw) != 0 ||
        pool_add_element(env, &pool, strs, k, &str) != 0) {
      goto done;
    }
    a->name = kw;
    a->str = str;
    list = (*env)->GetObjectArrayElement(env, lists, k);
    if (list == NULL) continue;
    if (a->kind == GJ_ARG_INT_LIST || a->kind == GJ_ARG_FLOAT_LIST) {
      jsize len = (*env)->GetArrayLength(env, (jarray)list);
      list_data[k] = malloc(len > 0 ? (size_t)len * 8 : 1);
      if (list_data[k] == NULL) {
        (*env)->DeleteLocalRef(env, list);
        throw_oom(env);
        goto done;
      }
      if (a->kind == GJ_ARG_INT_LIST) {
        (*env)->GetLongArrayRegion(env, (jlongArray)list, 0, len,
                                   (jlong*)list_data[k]);
        a->ints = (const int64_t*)list_data[k];
      } else {
        (*env)->GetDoubleArrayRegion(env, (jdoubleArray)list, 0, len,
                                     (jdouble*)list_data[k]);
        a->floats = (const double*)list_data[k];
      }
      a->len = (size_t)len;
    } else if (a->kind == GJ_ARG_REF_LIST) {
      jsize len = (*env)->GetArrayLength(env, (jarray)list), j;
      const char** refs =
          (const char**)calloc(len > 0 ? (size_t)len : 1, sizeof(char*));
      list_data[k] = (void*)refs;
      if (refs == NULL) {
        (*env)->DeleteLocalRef(env, list);
        throw_oom(env);
        goto done;
      }
      for (j = 0; j < len; ++j) {
        char* ref;
        if (pool_add_element(env, &pool, (jobjectArray)list, j, &ref) != 0) {
          (*env)->DeleteLocalRef(env, list);
          goto done;
        }
        refs[j] = ref;
      }
      a->refs = refs;
      a->len = (size_t)len;
    }
    (*env)->DeleteLocalRef(env, list);
  }
  check(env, gj_graph_builder_add_node(HANDLE(gj_graph_builder, builder),
                                       cname, ctarget, args, (size_t)n));
done:
  if (list_data != NULL) {
    for (k = 0; k < n; ++k) free(list_data[k]);
  }
  free(list_data);
  free(args);
  free(ckinds);
  free(cdtypes);
  free(cints);
  free(cfloats);
  pool_free(&pool);
}

JNIEXPORT void JNICALL FN(builderSetOutputs)(JNIEnv* env, jclass cls,
                                             jlong builder,
                                             jobjectArray names) {
  jsize n = (*env)->GetArrayLength(env, names), k;
  string_pool pool = {NULL, 0, 0};
  const char** cnames =
      (const char**)calloc(n > 0 ? (size_t)n : 1, sizeof(char*));
  (void)cls;
  if (cnames == NULL) {
    throw_oom(env);
    return;
  }
  for (k = 0; k < n; ++k) {
    char* s;
    if (pool_add_element(env, &pool, names, k, &s) != 0) goto done;
    cnames[k] = s;
  }
  check(env, gj_graph_builder_set_outputs(HANDLE(gj_graph_builder, builder),
                                          cnames, (size_t)n));
done:
  free((void*)cnames);
  pool_free(&pool);
}

JNIEXPORT jlong JNICALL FN(builderFinish)(JNIEnv* env, jclass cls,
                                          jlong builder) {
  gj_graph* graph = NULL;
  (void)cls;
  if (check(env,
            gj_graph_builder_finish(HANDLE(gj_graph_builder, builder), &graph))) {
    return 0;
  }
  return JLONG(graph);
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

/* Call options; a negative grad_mode / deterministic keeps the default.
 * `requires_grad` (byte[] or null) is copied into *flags (free it); `cancel`
 * is the address of a CancelFlag's int32 (0 = none), which the Java caller
 * keeps alive for the call; `stream` a CUstream (0 = the default stream).
 * Returns the options to pass (NULL when all are defaults), or sets *failed
 * with an exception pending. */
static const gj_call_options* call_options(JNIEnv* env,
                                           gj_call_options* options,
                                           jint grad_mode, jint deterministic,
                                           jlong timeout_us,
                                           jbyteArray requires_grad,
                                           jlong cancel, jlong stream,
                                           jint synchronize, uint8_t** flags,
                                           int* failed) {
  *flags = NULL;
  *failed = 0;
  if (grad_mode < 0 && deterministic < 0 && timeout_us == 0 &&
      requires_grad == NULL && cancel == 0 && stream == 0 &&
      synchronize == 0) {
    return NULL;
  }
  gj_call_options_init_v(options, sizeof *options);
  if (grad_mode >= 0) options->grad_mode = grad_mode;
  if (deterministic >= 0) options->deterministic = deterministic;
  options->timeout_us = timeout_us;
  if (requires_grad != NULL) {
    jsize len = (*env)->GetArrayLength(env, requires_grad);
    *flags = (uint8_t*)malloc(len > 0 ? (size_t)len : 1);
    if (*flags == NULL) {
      throw_oom(env);
      *failed = 1;
      return NULL;
    }
    (*env)->GetByteArrayRegion(env, requires_grad, 0, len, (jbyte*)*flags);
    options->requires_grad = *flags;
  }
  options->cancel = HANDLE(const int32_t, cancel);
  options->stream = HANDLE(void, stream);
  options->synchronize = synchronize;
  return options;
}

JNIEXPORT void JNICALL FN(functionCall)(
    JNIEnv* env, jclass cls, jlong function, jlongArray meta, jint num_inputs,
    jint num_outputs, jint grad_mode, jint deterministic, jlong timeout_us,
    jbyteArray requires_grad, jlong cancel, jlong stream, jint synchronize) {
  tensor_set tensors;
  gj_call_options storage;
  const gj_call_options* options;
  uint8_t* flags;
  gj_error* error;
  int failed;
  (void)cls;
  if (tensor_set_init(env, &tensors, meta,
                      (size_t)num_inputs + (size_t)num_outputs) != 0) {
    return;
  }
  options = call_options(env, &storage, grad_mode, deterministic, timeout_us,
                         requires_grad, cancel, stream, synchronize, &flags,
                         &failed);
  if (failed) {
    tensor_set_free(&tensors);
    return;
  }
  error = gj_function_call(HANDLE(gj_function, function), tensors.pointers,
                           (size_t)num_inputs,
                           tensors.pointers + num_inputs, (size_t)num_outputs,
                           options);
  free(flags);
  tensor_set_free(&tensors);
  check(env, error);
}

/* Returns Object[1 + n]: [0] a long[] with per output [DLManagedTensor*,
 * dl_code, dl_bits, ndim, shape[ndim], strides[ndim]], then a direct
 * ByteBuffer over each output's bytes (null for an empty output). On a
 * failure after the call every output is released. */
JNIEXPORT jobjectArray JNICALL FN(functionCallAlloc)(
    JNIEnv* env, jclass cls, jlong function, jlongArray meta, jint num_inputs,
    jint num_outputs, jint grad_mode, jint deterministic, jlong timeout_us,
    jbyteArray requires_grad, jlong cancel, jlong stream, jint synchronize) {
  tensor_set tensors;
  gj_call_options storage;
  const gj_call_options* options;
  uint8_t* flags;
  int failed;
  gj_error* error;
  DLManagedTensor* inline_outputs[kInlineTensors];
  DLManagedTensor** outputs = inline_outputs;
  jobjectArray result = NULL;
  jlongArray info = NULL;
  jlong* values = NULL;
  size_t n = (size_t)num_outputs, i, len = 0, pos = 0;
  (void)cls;
  if (tensor_set_init(env, &tensors, meta, (size_t)num_inputs) != 0) {
    return NULL;
  }
  if (n > kInlineTensors) {
    outputs = (DLManagedTensor**)calloc(n, sizeof(*outputs));
    if (outputs == NULL) {
      tensor_set_free(&tensors);
      throw_oom(env);
      return NULL;
    }
  }
  options = call_options(env, &storage, grad_mode, deterministic, timeout_us,
                         requires_grad, cancel, stream, synchronize, &flags,
                         &failed);
  if (failed) {
    tensor_set_free(&tensors);
    if (outputs != inline_outputs) free(outputs);
    return NULL;
  }
  error = gj_function_call_alloc(HANDLE(gj_function, function),
                                 tensors.pointers, (size_t)num_inputs,
                                 options, outputs, n);
  free(flags);
  tensor_set_free(&tensors);
  if (check(env, error)) goto done_no_outputs;

  for (i = 0; i < n; ++i) len += 4 + 2 * (size_t)outputs[i]->dl_tensor.ndim;
  values = (jlong*)malloc((len > 0 ? len : 1) * sizeof(jlong));
  if (values == NULL) {
    throw_oom(env);
    goto fail;
  }
  result = (*env)->NewObjectArray(env, (jsize)(n + 1), g_object_class, NULL);
  if (result == NULL) goto fail;
  for (i = 0; i < n; ++i) {
    const DLTensor* t = &outputs[i]->dl_tensor;
    int64_t bytes = (t->dtype.bits + 7) / 8;
    int d;
    values[pos++] = JLONG(outputs[i]);
    values[pos++] = t->dtype.code;
    values[pos++] = t->dtype.bits;
    values[pos++] = t->ndim;
    for (d = 0; d < t->ndim; ++d) {
      values[pos++] = t->shape[d];
      bytes *= t->shape[d];
    }
    for (d = 0; d < t->ndim; ++d) {
      /* The header promises explicit row-major strides; compute them if a
       * build ever returns NULL. */
      if (t->strides != NULL) {
        values[pos++] = t->strides[d];
      } else {
        int64_t stride = 1;
        int e;
        for (e = d + 1; e < t->ndim; ++e) stride *= t->shape[e];
        values[pos++] = stride;
      }
    }
    if (bytes > 0) {
      jobject view = (*env)->NewDirectByteBuffer(
          env, (char*)t->data + t->byte_offset, (jlong)bytes);
      if (view == NULL) goto fail;
      (*env)->SetObjectArrayElement(env, result, (jsize)(i + 1), view);
      (*env)->DeleteLocalRef(env, view);
    }
  }
  info = (*env)->NewLongArray(env, (jsize)len);
  if (info == NULL) goto fail;
  (*env)->SetLongArrayRegion(env, info, 0, (jsize)len, values);
  (*env)->SetObjectArrayElement(env, result, 0, info);
  (*env)->DeleteLocalRef(env, info);
  free(values);
  if (outputs != inline_outputs) free(outputs);
  return result;

fail:
  for (i = 0; i < n; ++i) gj_tensor_release(outputs[i]);
  free(values);
  if (result != NULL) (*env)->DeleteLocalRef(env, result);
  result = NULL;
done_no_outputs:
  if (outputs != inline_outputs) free(outputs);
  return result;
}

JNIEXPORT void JNICALL FN(functionPrecompile)(
    JNIEnv* env, jclass cls, jlong function, jlongArray meta, jint num_inputs,
    jint grad_mode, jint deterministic, jbyteArray requires_grad) {
  tensor_set tensors;
  gj_call_options storage;
  const gj_call_options* options;
  uint8_t* flags;
  int failed;
  gj_error* error;
  (void)cls;
  if (tensor_set_init(env, &tensors, meta, (size_t)num_inputs) != 0) {
    return;
  }
  options = call_options(env, &storage, grad_mode, deterministic, 0,
                         requires_grad, 0, 0, 0, &flags, &failed);
  if (failed) {
    tensor_set_free(&tensors);
    return;
  }
  error = gj_function_precompile(HANDLE(gj_function, function),
                                 tensors.pointers, (size_t)num_inputs,
                                 options);
  free(flags);
  tensor_set_free(&tensors);
  check(env, error);
}

/* For tests: what a call with these options passes in gj_call_options,
 * as [struct_size, end of the synchronize field, stream, synchronize]
 * (all zero when the call would pass NULL, meaning defaults). */
JNIEXPORT jlongArray JNICALL FN(callOptionsPassed)(JNIEnv* env, jclass cls,
                                                   jlong stream,
                                                   jint synchronize) {
  gj_call_options storage;
  const gj_call_options* options;
  uint8_t* flags;
  int failed;
  jlong values[4] = {0, 0, 0, 0};
  jlongArray result;
  (void)cls;
  options = call_options(env, &storage, -1, -1, 0, NULL, 0, stream,
                         synchronize, &flags, &failed);
  if (failed) return NULL;
  if (options != NULL) {
    values[0] = (jlong)options->struct_size;
    values[1] = (jlong)(offsetof(gj_call_options, synchronize) +
                        sizeof options->synchronize);
    values[2] = JLONG(options->stream);
    values[3] = options->synchronize;
  }
  free(flags);
  result = (*env)->NewLongArray(env, 4);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 4, values);
  return result;
}

/* [calls, hits, misses, compiles, recompiles, fallback_calls,
 * cache_entries, compile_ms_total bits, guard_ns_mean bits, graph_count,
 * graph_break_count, cuda_graphs_recorded, cuda_graph_replays,
 * cuda_graph_pointer_updates, cuda_graph_recaptures, cuda_graph_evictions,
 * cuda_graph_pool_bytes, eager_while_compiling]: FunctionStats.of's order. */
JNIEXPORT jlongArray JNICALL FN(functionStats)(JNIEnv* env, jclass cls,
                                               jlong function) {
  gj_function_stats stats;
  jlong values[18];
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
  result = (*env)->NewLongArray(env, 18);
  if (result != NULL) (*env)->SetLongArrayRegion(env, result, 0, 18, values);
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

JNIEXPORT void JNICALL FN(tensorRelease)(JNIEnv* env, jclass cls,
                                         jlong tensor) {
  (void)env;
  (void)cls;
  gj_tensor_release(HANDLE(DLManagedTensor, tensor));
}
