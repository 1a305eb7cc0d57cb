/* Tensors across JNI: packed metadata to DLTensor, direct buffers, and the
 * release of library-allocated tensors. */
#include "guardjit_jni.h"

#include <limits.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Tensors: packed metadata to DLTensor                                      */

void tensor_set_free(tensor_set* set) {
  if (set->tensors != set->inline_tensors) free(set->tensors);
  if (set->pointers != set->inline_pointers) free((void*)set->pointers);
  if (set->meta != set->inline_meta) free(set->meta);
}

int tensor_set_init(JNIEnv* env, tensor_set* set, jlongArray meta_array,
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
    /* code | device type << 8 | device id << 32 (Tensor.packMeta); type 0 is
     * kDLCPU. */
    t->dtype.code = (uint8_t)(set->meta[pos + 2] & 0xff);
    t->dtype.bits = (uint8_t)set->meta[pos + 3];
    t->dtype.lanes = 1;
    t->device.device_type = (DLDeviceType)((set->meta[pos + 2] >> 8) & 0xffffff);
    if (t->device.device_type == 0) t->device.device_type = kDLCPU;
    t->device.device_id = (int32_t)(set->meta[pos + 2] >> 32);
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

JNIEXPORT void JNICALL FN(tensorRelease)(JNIEnv* env, jclass cls,
                                         jlong tensor) {
  (void)env;
  (void)cls;
  gj_tensor_release(HANDLE(DLManagedTensor, tensor));
}
