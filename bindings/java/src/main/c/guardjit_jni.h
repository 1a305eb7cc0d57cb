/*
 * Internal header of the JNI glue (not installed): what its files share.
 * One concept per file: guardjit_jni.c (JNI_OnLoad, exceptions, strings,
 * version, logging), tensors.c (packed metadata to DLTensor, library
 * tensors), handles.c (contexts, graphs, functions), builder.c (the graph
 * builder), calls.c (call options and the calls), stats.c (memory, compile
 * cache and function stats, cache directories, explain, guard dumps, compile
 * reports). Symbols other than the JNI entry points are hidden
 * (C_VISIBILITY_PRESET in CMakeLists.txt).
 */
#ifndef GUARDJIT_JNI_H_
#define GUARDJIT_JNI_H_

#include <guardjit/guardjit.h>
#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#define HANDLE(type, value) ((type*)(intptr_t)(value))
#define JLONG(ptr) ((jlong)(intptr_t)(ptr))
#define FN(name) Java_dev_guardjit_Native_##name

/* java.lang.Object (a global ref filled in JNI_OnLoad). */
extern jclass g_object_class;

/* ------------------------------------------------------------------------ */
/* Exceptions and strings (guardjit_jni.c)                                  */

void throw_named(JNIEnv* env, const char* class_name, const char* message);
void throw_oom(JNIEnv* env);
/* A java.lang.String from real UTF-8; NULL with an exception pending. */
jstring new_string(JNIEnv* env, const char* text);
/* Throws GuardjitException for `error` and destroys it; 1 if there was one. */
int check(JNIEnv* env, gj_error* error);
/* A malloc'd NUL-terminated UTF-8 copy of `str` (NULL for null); -1 with an
 * exception pending. */
int utf8_dup(JNIEnv* env, jstring str, char** out);
/* A library-allocated string as a Java String, freed. */
jstring take_string(JNIEnv* env, char* text);

/* ------------------------------------------------------------------------ */
/* Tensors (tensors.c)                                                      */

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

void tensor_set_free(tensor_set* set);
/* Decodes `count` tensors from `meta`. Returns 0, or -1 with an exception
 * pending (the set is freed). */
int tensor_set_init(JNIEnv* env, tensor_set* set, jlongArray meta_array,
                    size_t count);

#endif /* GUARDJIT_JNI_H_ */
