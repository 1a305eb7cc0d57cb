/* The graph builder: inputs, constants, nodes with their arguments. */
#include "guardjit_jni.h"

#include <stdlib.h>

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
  /* The _v form (0.9) reads elements this binding's sizeof(gj_arg) apart. */
  check(env, gj_graph_builder_add_node_v(HANDLE(gj_graph_builder, builder),
                                         cname, ctarget, args, (size_t)n,
                                         sizeof(gj_arg)));
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
