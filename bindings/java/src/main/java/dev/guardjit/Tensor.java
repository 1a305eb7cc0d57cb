package dev.guardjit;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A CPU tensor: a dtype, a shape, optional strides and a byte offset over a direct {@link
 * ByteBuffer} in native byte order. Crosses into guardjit as a DLPack {@code DLTensor} whose
 * data pointer is the buffer's address, with no copy: inputs are read and outputs written in
 * place. Immutable (the metadata; the bytes are the buffer's).
 *
 * <p>Made by {@link #wrap wrapping} a direct buffer (zero-copy), {@link #allocate allocating}
 * one, copying a Java array ({@link #of(float[], long...)} and friends), or as the view of a
 * library-allocated output ({@link ManagedTensor#tensor()}), which is usable while that output
 * is open.
 *
 * <p>Strides and the byte offset are DLPack's: strides count elements and may be null for
 * contiguous row-major; {@code byteOffset} is added to the buffer's address. Every element the
 * shape and strides reach must lie inside the buffer (checked on construction); the data must
 * be aligned to the item size (checked by the library: {@link ErrorCode#INVALID_ARGUMENT}).
 * Buffers are limited to 2^31-1 bytes, as Java's.
 *
 * <p>Thread safety: a Tensor may be used from any thread; guardjit reads inputs and writes
 * outputs during a call only, so concurrent calls may share inputs but must not share outputs
 * (nor write a buffer another call reads).
 */
public final class Tensor {
  private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

  final ByteBuffer buffer; // index 0 is the tensor's base address
  final HandleState owner; // the ManagedTensor this views, or null
  private final DType dtype;
  private final long[] shape;
  private final long[] strides; // null = contiguous
  private final long byteOffset;
  private final long numel;
  final long[] meta; // packed record for the JNI glue, with the buffer's address
  private final Device device;
  // Made from a raw address (ofPointer, or a CUDA output): `buffer` is an empty anchor, not the
  // data, so nothing here reads the bytes.
  private final boolean raw;
  // The bytes from the base address a view may span (checkExtent): the buffer's capacity, a
  // library-allocated CUDA output's size, or -1 for memory the caller vouches for (ofPointer).
  private final long extent;

  private Tensor(
      ByteBuffer buffer,
      long address,
      HandleState owner,
      DType dtype,
      long[] shape,
      long[] strides,
      long byteOffset) {
    this(
        buffer,
        address,
        owner,
        dtype,
        shape,
        strides,
        byteOffset,
        Device.cpu(),
        false,
        buffer.capacity());
  }

  private Tensor(
      ByteBuffer buffer,
      long address,
      HandleState owner,
      DType dtype,
      long[] shape,
      long[] strides,
      long byteOffset,
      Device device,
      boolean raw,
      long extent) {
    this.device = Objects.requireNonNull(device, "device");
    this.raw = raw;
    this.extent = extent;
    this.buffer = buffer;
    this.owner = owner;
    this.dtype = Objects.requireNonNull(dtype, "dtype");
    this.shape = shape.clone();
    this.strides = strides == null ? null : strides.clone();
    this.byteOffset = byteOffset;
    if (this.strides != null && this.strides.length != this.shape.length) {
      throw new IllegalArgumentException(
          "strides has " + this.strides.length + " dims, shape has " + this.shape.length);
    }
    if (byteOffset < 0) {
      throw new IllegalArgumentException("negative byteOffset " + byteOffset);
    }
    long n = 1;
    for (long s : this.shape) {
      if (s < 0) {
        throw new IllegalArgumentException("negative size in shape " + Arrays.toString(shape));
      }
      n = Math.multiplyExact(n, s);
    }
    this.numel = n;
    if (extent >= 0) {
      checkExtent();
    }
    this.meta = packMeta(dtype, this.shape, this.strides, byteOffset, device);
    this.meta[0] = address;
  }

  private Tensor(
      ByteBuffer buffer,
      HandleState owner,
      DType dtype,
      long[] shape,
      long[] strides,
      long byteOffset) {
    this(buffer, Native.bufferAddress(buffer), owner, dtype, shape, strides, byteOffset);
  }

  // ---------------------------------------------------------------- factories

  /** A contiguous tensor over {@code buffer} from its position (zero-copy). */
  public static Tensor wrap(ByteBuffer buffer, DType dtype, long... shape) {
    return wrap(buffer, dtype, shape, null, 0);
  }

  /**
   * A tensor over {@code buffer} (zero-copy): the data starts {@code byteOffset} bytes past the
   * buffer's current position; strides in elements, null for contiguous. The buffer's
   * position, limit and order are not changed and do not matter afterwards.
   *
   * @throws IllegalArgumentException if the buffer is not direct or too small
   */
  public static Tensor wrap(
      ByteBuffer buffer, DType dtype, long[] shape, long[] strides, long byteOffset) {
    Objects.requireNonNull(buffer, "buffer");
    if (!buffer.isDirect()) {
      throw new IllegalArgumentException(
          "guardjit tensors need a direct ByteBuffer (ByteBuffer.allocateDirect)");
    }
    return new Tensor(buffer.slice().order(NATIVE), null, dtype, shape, strides, byteOffset);
  }

  /** A zero-filled contiguous tensor in a new direct buffer aligned to 64 bytes. */
  public static Tensor allocate(DType dtype, long... shape) {
    long bytes = dtype.itemSize();
    for (long s : shape) {
      if (s < 0) {
        throw new IllegalArgumentException("negative size in shape " + Arrays.toString(shape));
      }
      bytes = Math.multiplyExact(bytes, s);
    }
    return new Tensor(newBuffer(bytes), null, dtype, shape, null, 0);
  }

  /** A float32 tensor holding a copy of {@code data}; the shape's product must equal its length. */
  public static Tensor of(float[] data, long... shape) {
    Tensor t = allocate(DType.FLOAT32, checkLength(data.length, shape));
    t.buffer.asFloatBuffer().put(data);
    return t;
  }

  /** A float64 tensor holding a copy of {@code data}. */
  public static Tensor of(double[] data, long... shape) {
    Tensor t = allocate(DType.FLOAT64, checkLength(data.length, shape));
    t.buffer.asDoubleBuffer().put(data);
    return t;
  }

  /** An int32 tensor holding a copy of {@code data}. */
  public static Tensor of(int[] data, long... shape) {
    Tensor t = allocate(DType.INT32, checkLength(data.length, shape));
    t.buffer.asIntBuffer().put(data);
    return t;
  }

  /** An int64 tensor holding a copy of {@code data}. */
  public static Tensor of(long[] data, long... shape) {
    Tensor t = allocate(DType.INT64, checkLength(data.length, shape));
    t.buffer.asLongBuffer().put(data);
    return t;
  }

  /** A bool tensor holding a copy of {@code data}. */
  public static Tensor of(boolean[] data, long... shape) {
    Tensor t = allocate(DType.BOOL, checkLength(data.length, shape));
    for (int i = 0; i < data.length; ++i) {
      t.buffer.put(i, data[i] ? (byte) 1 : (byte) 0);
    }
    return t;
  }

  /** A one-byte-per-element tensor (INT8, UINT8, BOOL) holding a copy of {@code data}. */
  public static Tensor ofBytes(DType dtype, byte[] data, long... shape) {
    if (dtype.itemSize() != 1) {
      throw new IllegalArgumentException(dtype + " is not a one-byte dtype");
    }
    Tensor t = allocate(dtype, checkLength(data.length, shape));
    t.buffer.put(0, data);
    return t;
  }

  /**
   * A tensor over memory Java does not hold: CUDA device memory (a {@code CUdeviceptr} from a
   * CUDA library such as JCuda, or another framework's tensor), page-locked host memory ({@link
   * Device#cudaHost()}) or native host memory ({@link Device#cpu()}). guardjit reads or writes
   * it during a call; on CUDA a call enqueues on its stream and returns, and the memory must stay
   * valid, and unused by others, until the stream has run the call. Its bytes cannot be read from
   * Java ({@link #buffer()} and the copy methods throw {@link IllegalStateException}).
   *
   * @param address the first element's address (byte offset 0); 0 only for an empty tensor
   * @param strides in elements (non-negative), or null for contiguous row-major
   * @throws IllegalArgumentException on a negative size or stride, a misaligned or zero address,
   *     or a negative CUDA ordinal
   */
  public static Tensor ofPointer(
      long address, Device device, DType dtype, long[] shape, long[] strides) {
    Objects.requireNonNull(device, "device");
    Objects.requireNonNull(dtype, "dtype");
    if (device.type() != Device.KDL_CPU
        && device.type() != Device.KDL_CUDA
        && device.type() != Device.KDL_CUDA_HOST) {
      throw new IllegalArgumentException("unknown device type " + device.type());
    }
    if (device.id() < 0 || (device.type() != Device.KDL_CUDA && device.id() != 0)) {
      throw new IllegalArgumentException("device " + device + " has ordinal " + device.id());
    }
    if (strides != null) {
      for (long s : strides) {
        if (s < 0) {
          throw new IllegalArgumentException("negative stride in " + Arrays.toString(strides));
        }
      }
    }
    Tensor t =
        new Tensor(
            ByteBuffer.allocateDirect(0).order(NATIVE),
            address,
            null,
            dtype,
            shape,
            strides,
            0,
            device,
            true,
            -1);
    if (t.numel > 0 && (address == 0 || Long.remainderUnsigned(address, dtype.itemSize()) != 0)) {
      throw new IllegalArgumentException(
          "address 0x" + Long.toHexString(address) + " is zero or not aligned to " + dtype
              + "'s " + dtype.itemSize() + " bytes");
    }
    return t;
  }

  /** A view of a library-allocated output; its data lives until the output is closed. */
  static Tensor ofManaged(
      ByteBuffer view, HandleState owner, DType dtype, long[] shape, long[] strides) {
    ByteBuffer b = view != null ? view.order(NATIVE) : ByteBuffer.allocateDirect(0).order(NATIVE);
    return new Tensor(b, owner, dtype, shape, strides, 0);
  }

  /**
   * A library-allocated output on a CUDA device: an address, no Java buffer. Views of it are
   * checked against the bytes it spans, as views of host outputs are against their buffer.
   */
  static Tensor ofManagedDevice(
      long address, Device device, HandleState owner, DType dtype, long[] shape, long[] strides) {
    return new Tensor(
        ByteBuffer.allocateDirect(0).order(NATIVE),
        address,
        owner,
        dtype,
        shape,
        strides,
        0,
        device,
        true,
        spanBytes(dtype, shape, strides));
  }

  // The bytes from the base address that a tensor of this layout spans (0 for no elements).
  private static long spanBytes(DType dtype, long[] shape, long[] strides) {
    long end = 1;
    for (int d = 0; d < shape.length; ++d) {
      if (shape[d] == 0) {
        return 0;
      }
      long stride = strides != null ? strides[d] : 1;
      if (strides == null) {
        for (int e = d + 1; e < shape.length; ++e) {
          stride = Math.multiplyExact(stride, shape[e]);
        }
      }
      end = Math.addExact(end, Math.multiplyExact(shape[d] - 1, stride));
    }
    return Math.multiplyExact(end, dtype.itemSize());
  }

  /**
   * Another view of the same bytes: {@code byteOffset} is from this tensor's buffer base (not
   * from this view's offset), strides in elements or null for contiguous. Shares the data;
   * a view of a {@link ManagedTensor} is valid while it is open.
   */
  public Tensor view(long[] shape, long[] strides, long byteOffset) {
    return new Tensor(
        buffer, meta[0], owner, dtype, shape, strides, byteOffset, device, raw, extent);
  }

  /** This tensor with dims {@code d0} and {@code d1} swapped (a strided view, no copy). */
  public Tensor transpose(int d0, int d1) {
    long[] st = strides();
    long[] sh = shape.clone();
    long t = sh[d0];
    sh[d0] = sh[d1];
    sh[d1] = t;
    t = st[d0];
    st[d0] = st[d1];
    st[d1] = t;
    return new Tensor(buffer, meta[0], owner, dtype, sh, st, byteOffset, device, raw, extent);
  }

  // ---------------------------------------------------------------- metadata

  public DType dtype() {
    return dtype;
  }

  /** Where the data is: {@link Device#cpu()} for buffers. */
  public Device device() {
    return device;
  }

  /**
   * The base address the byte offset counts from: a direct buffer's, or the pointer of {@link
   * #ofPointer} (a {@code CUdeviceptr} for a CUDA tensor, such as a CUDA output of {@link
   * Function#callAlloc}, to hand to a CUDA library).
   */
  public long address() {
    return meta[0];
  }

  public long[] shape() {
    return shape.clone();
  }

  public int ndim() {
    return shape.length;
  }

  /** The strides in elements (computed row-major ones for a contiguous tensor). */
  public long[] strides() {
    return strides != null ? strides.clone() : contiguousStrides(shape);
  }

  public long byteOffset() {
    return byteOffset;
  }

  /** Number of elements. */
  public long numel() {
    return numel;
  }

  /** Whether the elements are row-major with no gaps. */
  public boolean isContiguous() {
    if (strides == null) {
      return true;
    }
    long expected = 1;
    for (int d = shape.length - 1; d >= 0; --d) {
      if (shape[d] != 1 && strides[d] != expected) {
        return false;
      }
      expected *= shape[d];
    }
    return true;
  }

  /** The metadata alone. */
  public TensorSpec spec() {
    return TensorSpec.of(dtype, shape, strides);
  }

  /**
   * The direct buffer the tensor views (native order; index 0 is the base that {@link
   * #byteOffset()} counts from). A view of a {@link ManagedTensor} must not be touched after
   * the output is closed.
   */
  public ByteBuffer buffer() {
    checkOwner();
    requireBytes();
    return buffer.duplicate().order(NATIVE);
  }

  // ---------------------------------------------------------------- copies out

  /** The elements in row-major order, copied (FLOAT32 only). */
  public float[] toFloatArray() {
    requireDType(DType.FLOAT32);
    requireBytes();
    float[] out = new float[toIntCount()];
    acquireOwner();
    try {
      if (isContiguous()) {
        buffer.duplicate().order(NATIVE).position((int) byteOffset).asFloatBuffer().get(out);
      } else {
        long[] offsets = elementOffsets();
        for (int i = 0; i < out.length; ++i) {
          out[i] = buffer.getFloat((int) offsets[i]);
        }
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  /** The elements in row-major order, copied (FLOAT64 only). */
  public double[] toDoubleArray() {
    requireDType(DType.FLOAT64);
    requireBytes();
    double[] out = new double[toIntCount()];
    acquireOwner();
    try {
      long[] offsets = elementOffsets();
      for (int i = 0; i < out.length; ++i) {
        out[i] = buffer.getDouble((int) offsets[i]);
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  /** The elements in row-major order, copied (INT32 only). */
  public int[] toIntArray() {
    requireDType(DType.INT32);
    requireBytes();
    int[] out = new int[toIntCount()];
    acquireOwner();
    try {
      long[] offsets = elementOffsets();
      for (int i = 0; i < out.length; ++i) {
        out[i] = buffer.getInt((int) offsets[i]);
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  /** The elements in row-major order, copied (INT64 only). */
  public long[] toLongArray() {
    requireDType(DType.INT64);
    requireBytes();
    long[] out = new long[toIntCount()];
    acquireOwner();
    try {
      long[] offsets = elementOffsets();
      for (int i = 0; i < out.length; ++i) {
        out[i] = buffer.getLong((int) offsets[i]);
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  /** The elements in row-major order, copied (BOOL only). */
  public boolean[] toBooleanArray() {
    requireDType(DType.BOOL);
    requireBytes();
    boolean[] out = new boolean[toIntCount()];
    acquireOwner();
    try {
      long[] offsets = elementOffsets();
      for (int i = 0; i < out.length; ++i) {
        out[i] = buffer.get((int) offsets[i]) != 0;
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  /** The raw bytes of the elements in row-major order, copied (any dtype). */
  public byte[] toByteArray() {
    requireBytes();
    int item = dtype.itemSize();
    byte[] out = new byte[Math.multiplyExact(toIntCount(), item)];
    acquireOwner();
    try {
      long[] offsets = elementOffsets();
      ByteBuffer b = buffer.duplicate();
      for (int i = 0; i < offsets.length; ++i) {
        b.get((int) offsets[i], out, i * item, item);
      }
    } finally {
      releaseOwner();
    }
    return out;
  }

  @Override
  public String toString() {
    return "Tensor["
        + spec()
        + (device.type() != Device.KDL_CPU ? ", " + device : "")
        + (owner != null ? ", library-owned" : "")
        + "]";
  }

  // ---------------------------------------------------------------- internals

  boolean isReadOnly() {
    return buffer.isReadOnly();
  }

  void acquireOwner() {
    if (owner != null) {
      owner.acquire();
    }
  }

  void releaseOwner() {
    if (owner != null) {
      owner.release();
    }
  }

  private void checkOwner() {
    if (owner != null && owner.isClosed()) {
      throw new IllegalStateException("ManagedTensor is closed");
    }
  }

  private void requireBytes() {
    if (raw) {
      throw new IllegalStateException(
          "tensor over a raw address on " + device + ": its bytes are not a Java buffer");
    }
  }

  private void requireDType(DType expected) {
    if (dtype != expected) {
      throw new IllegalStateException("tensor is " + dtype + ", not " + expected);
    }
  }

  private int toIntCount() {
    if (numel > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("tensor of " + numel + " elements does not fit an array");
    }
    return (int) numel;
  }

  /** Byte offsets (from the buffer base) of every element in row-major order. */
  private long[] elementOffsets() {
    long[] st = strides();
    long[] offsets = new long[toIntCount()];
    if (offsets.length == 0) {
      return offsets;
    }
    int item = dtype.itemSize();
    long[] index = new long[shape.length];
    long offset = byteOffset;
    for (int i = 0; i < offsets.length; ++i) {
      offsets[i] = offset;
      for (int d = shape.length - 1; d >= 0; --d) {
        if (++index[d] < shape[d]) {
          offset += st[d] * item;
          break;
        }
        offset -= (shape[d] - 1) * st[d] * item;
        index[d] = 0;
      }
    }
    return offsets;
  }

  private void checkExtent() {
    if (numel == 0) {
      return;
    }
    long[] st = strides();
    long item = dtype.itemSize();
    long lo = 0;
    long hi = 0;
    for (int d = 0; d < shape.length; ++d) {
      long span = Math.multiplyExact(shape[d] - 1, st[d]);
      if (span < 0) {
        lo = Math.addExact(lo, span);
      } else {
        hi = Math.addExact(hi, span);
      }
    }
    long first = Math.addExact(byteOffset, Math.multiplyExact(lo, item));
    long end = Math.addExact(byteOffset, Math.addExact(Math.multiplyExact(hi, item), item));
    if (first < 0 || end > extent) {
      throw new IllegalArgumentException(
          "tensor " + dtype + Arrays.toString(shape) + " with strides " + Arrays.toString(st)
              + " and byteOffset " + byteOffset + " spans bytes [" + first + ", " + end
              + ") of " + (raw ? "device memory" : "a buffer") + " of " + extent);
    }
  }

  private static ByteBuffer newBuffer(long bytes) {
    if (bytes > Integer.MAX_VALUE - 64) {
      throw new IllegalArgumentException("tensor of " + bytes + " bytes exceeds a ByteBuffer");
    }
    int n = (int) bytes;
    ByteBuffer raw = ByteBuffer.allocateDirect(n + 63);
    int misalignment = raw.alignmentOffset(0, 64);
    return raw.slice(misalignment == 0 ? 0 : 64 - misalignment, n).order(NATIVE);
  }

  private static long[] checkLength(int length, long[] shape) {
    long n = 1;
    for (long s : shape) {
      if (s < 0) {
        throw new IllegalArgumentException("negative size in shape " + Arrays.toString(shape));
      }
      n = Math.multiplyExact(n, s);
    }
    if (n != length) {
      throw new IllegalArgumentException(
          "shape " + Arrays.toString(shape) + " has " + n + " elements, data has " + length);
    }
    return shape;
  }

  static long[] contiguousStrides(long[] shape) {
    long[] st = new long[shape.length];
    long s = 1;
    for (int d = shape.length - 1; d >= 0; --d) {
      st[d] = s;
      s *= shape[d];
    }
    return st;
  }

  /**
   * [address (0 here), byteOffset, dl code, dl bits, ndim, shape..., hasStrides, strides...]: the
   * record tensors.c (JNI) decodes into a DLTensor.
   */
  static long[] packMeta(DType dtype, long[] shape, long[] strides, long byteOffset) {
    return packMeta(dtype, shape, strides, byteOffset, Device.cpu());
  }

  /**
   * As above on {@code device}: the dl code slot carries the device as {@code code | type << 8 |
   * id << 32}, type 0 meaning kDLCPU.
   */
  static long[] packMeta(
      DType dtype, long[] shape, long[] strides, long byteOffset, Device device) {
    int n = shape.length;
    long[] m = new long[6 + n + (strides != null ? n : 0)];
    m[1] = byteOffset;
    m[2] = dtype.dlCode();
    if (device.type() != Device.KDL_CPU) {
      m[2] |= ((long) device.type() << 8) | ((long) device.id() << 32);
    }
    m[3] = dtype.bits();
    m[4] = n;
    System.arraycopy(shape, 0, m, 5, n);
    if (strides != null) {
      m[5 + n] = 1;
      System.arraycopy(strides, 0, m, 6 + n, n);
    }
    return m;
  }
}
