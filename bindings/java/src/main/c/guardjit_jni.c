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
 *
 * This file: JNI_OnLoad, exceptions, strings, version and logging; the rest
 * is one concept per file (see guardjit_jni.h).
 */
#include "guardjit_jni.h"

#include <pthread.h>
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
jclass g_object_class;
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

void throw_named(JNIEnv* env, const char* class_name, const char* message) {
  jclass cls = (*env)->FindClass(env, class_name);
  if (cls != NULL) {
    (*env)->ThrowNew(env, cls, message);
    (*env)->DeleteLocalRef(env, cls);
  }
}

void throw_oom(JNIEnv* env) {
  throw_named(env, "java/lang/OutOfMemoryError", "guardjit JNI: malloc failed");
}

/* A java.lang.String from UTF-8 bytes (JNI's NewStringUTF expects modified
 * UTF-8, which differs for NUL and characters past the BMP). NULL on
 * failure, with an exception pending. */
jstring new_string(JNIEnv* env, const char* text) {
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
int check(JNIEnv* env, gj_error* error) {
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
int utf8_dup(JNIEnv* env, jstring str, char** out) {
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
jstring take_string(JNIEnv* env, char* text) {
  jstring result = new_string(env, text);
  gj_string_destroy(text);
  return result;
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
