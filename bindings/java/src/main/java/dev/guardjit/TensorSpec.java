package dev.guardjit;

import java.util.Arrays;
import java.util.Objects;

/**
 * A tensor's metadata without data: dtype, shape and optional strides (in elements; null =
 * contiguous row-major). What {@link Function#precompile} and {@link Graph#compileReport}
 * read. Immutable.
 */
public final class TensorSpec {
  private final DType dtype;
  private final long[] shape;
  private final long[] strides;

  private TensorSpec(DType dtype, long[] shape, long[] strides) {
    this.dtype = Objects.requireNonNull(dtype, "dtype");
    this.shape = shape.clone();
    if (strides != null && strides.length != shape.length) {
      throw new IllegalArgumentException(
          "strides has " + strides.length + " dims, shape has " + shape.length);
    }
    this.strides = strides == null ? null : strides.clone();
  }

  /** A contiguous tensor of this dtype and shape. */
  public static TensorSpec of(DType dtype, long... shape) {
    return new TensorSpec(dtype, shape, null);
  }

  /** A tensor with explicit strides (in elements). */
  public static TensorSpec of(DType dtype, long[] shape, long[] strides) {
    return new TensorSpec(dtype, shape, strides);
  }

  public DType dtype() {
    return dtype;
  }

  public long[] shape() {
    return shape.clone();
  }

  /** The strides, or null for contiguous. */
  public long[] strides() {
    return strides == null ? null : strides.clone();
  }

  /** The packed metadata record (see guardjit_jni.c, JNI) with a NULL data pointer. */
  long[] meta() {
    return Tensor.packMeta(dtype, shape, strides, 0);
  }

  static long[] packAll(TensorSpec[] specs) {
    int len = 0;
    long[][] parts = new long[specs.length][];
    for (int i = 0; i < specs.length; ++i) {
      parts[i] = Objects.requireNonNull(specs[i], "input " + i).meta();
      len += parts[i].length;
    }
    long[] meta = new long[len];
    int pos = 0;
    for (long[] part : parts) {
      System.arraycopy(part, 0, meta, pos, part.length);
      pos += part.length;
    }
    return meta;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TensorSpec s
        && dtype == s.dtype
        && Arrays.equals(shape, s.shape)
        && Arrays.equals(strides, s.strides);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dtype, Arrays.hashCode(shape), Arrays.hashCode(strides));
  }

  @Override
  public String toString() {
    return dtype.name().toLowerCase(java.util.Locale.ROOT) + Arrays.toString(shape)
        + (strides == null ? "" : " strides " + Arrays.toString(strides));
  }
}
