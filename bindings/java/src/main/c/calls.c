/* Calls: call options, gj_function_call, gj_function_call_alloc (outputs
 * handed to Java as direct buffers) and gj_function_precompile. */
#include "guardjit_jni.h"

#include <stdlib.h>

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

/* What every call passes besides its outputs: the decoded tensors and the
 * options, with the requires_grad copy they point to. */
typedef struct call_args {
  tensor_set tensors;
  gj_call_options storage;
  const gj_call_options* options;
  uint8_t* flags;
} call_args;

/* Decodes `count` tensors and the options (see call_options). Returns 0, or
 * -1 with an exception pending and nothing to free. */
static int call_args_init(JNIEnv* env, call_args* args, jlongArray meta,
                          size_t count, jint grad_mode, jint deterministic,
                          jlong timeout_us, jbyteArray requires_grad,
                          jlong cancel, jlong stream, jint synchronize) {
  int failed;
  if (tensor_set_init(env, &args->tensors, meta, count) != 0) return -1;
  args->options = call_options(env, &args->storage, grad_mode, deterministic,
                               timeout_us, requires_grad, cancel, stream,
                               synchronize, &args->flags, &failed);
  if (failed) {
    tensor_set_free(&args->tensors);
    return -1;
  }
  return 0;
}

static void call_args_free(call_args* args) {
  free(args->flags);
  tensor_set_free(&args->tensors);
}

JNIEXPORT void JNICALL FN(functionCall)(
    JNIEnv* env, jclass cls, jlong function, jlongArray meta, jint num_inputs,
    jint num_outputs, jint grad_mode, jint deterministic, jlong timeout_us,
    jbyteArray requires_grad, jlong cancel, jlong stream, jint synchronize) {
  call_args args;
  gj_error* error;
  (void)cls;
  if (call_args_init(env, &args, meta, (size_t)num_inputs + (size_t)num_outputs,
                     grad_mode, deterministic, timeout_us, requires_grad,
                     cancel, stream, synchronize) != 0) {
    return;
  }
  error = gj_function_call(HANDLE(gj_function, function),
                           args.tensors.pointers, (size_t)num_inputs,
                           args.tensors.pointers + num_inputs,
                           (size_t)num_outputs, args.options);
  call_args_free(&args);
  check(env, error);
}

/* Returns Object[1 + n]: [0] a long[] with per output [DLManagedTensor*,
 * dl_code, dl_bits, ndim, device_type, device_id, data + byte_offset,
 * shape[ndim], strides[ndim]], then a direct ByteBuffer over each host
 * output's bytes (null for an empty output and for a CUDA output, whose
 * memory the host cannot read). On a failure after the call every output is
 * released. */
JNIEXPORT jobjectArray JNICALL FN(functionCallAlloc)(
    JNIEnv* env, jclass cls, jlong function, jlongArray meta, jint num_inputs,
    jint num_outputs, jint grad_mode, jint deterministic, jlong timeout_us,
    jbyteArray requires_grad, jlong cancel, jlong stream, jint synchronize) {
  call_args args;
  gj_error* error;
  DLManagedTensor* inline_outputs[kInlineTensors];
  DLManagedTensor** outputs = inline_outputs;
  jobjectArray result = NULL;
  jlongArray info = NULL;
  jlong* values = NULL;
  size_t n = (size_t)num_outputs, i, len = 0, pos = 0;
  (void)cls;
  if (call_args_init(env, &args, meta, (size_t)num_inputs, grad_mode,
                     deterministic, timeout_us, requires_grad, cancel, stream,
                     synchronize) != 0) {
    return NULL;
  }
  if (n > kInlineTensors) {
    outputs = (DLManagedTensor**)calloc(n, sizeof(*outputs));
    if (outputs == NULL) {
      call_args_free(&args);
      throw_oom(env);
      return NULL;
    }
  }
  error = gj_function_call_alloc(HANDLE(gj_function, function),
                                 args.tensors.pointers, (size_t)num_inputs,
                                 args.options, outputs, n);
  call_args_free(&args);
  if (check(env, error)) goto done_no_outputs;

  for (i = 0; i < n; ++i) len += 7 + 2 * (size_t)outputs[i]->dl_tensor.ndim;
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
    values[pos++] = t->device.device_type;
    values[pos++] = t->device.device_id;
    values[pos++] = JLONG((char*)t->data + t->byte_offset);
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
    if (bytes > 0 && t->device.device_type != kDLCUDA) {
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
  call_args args;
  gj_error* error;
  (void)cls;
  if (call_args_init(env, &args, meta, (size_t)num_inputs, grad_mode,
                     deterministic, 0, requires_grad, 0, 0, 0) != 0) {
    return;
  }
  error = gj_function_precompile(HANDLE(gj_function, function),
                                 args.tensors.pointers, (size_t)num_inputs,
                                 args.options);
  call_args_free(&args);
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
