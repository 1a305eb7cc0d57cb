package dev.guardjit;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

/**
 * A library-allocated output of {@link Function#callAlloc}: a contiguous tensor whose memory
 * belongs to guardjit's caching allocator until {@link #close()} releases it ({@code
 * gj_tensor_release}). It counts in its context's {@link MemoryStats#bytesInUse()} until then,
 * even after the context is closed.
 *
 * <p>{@link #buffer()} and {@link #tensor()} view the library's memory with no copy. The copy
 * methods ({@link #toFloatArray()}, ...) and calls taking {@link #tensor()} as an input check
 * that the output is open and keep it open while they run; a closed output throws {@link
 * IllegalStateException}. A raw {@link ByteBuffer} cannot be revoked, though: do not touch a
 * buffer obtained from {@link #buffer()} after closing. Closing is idempotent and thread-safe.
 * An output never closed is released by a {@link Cleaner} once neither it nor any tensor or
 * buffer viewing it is reachable.
 */
public final class ManagedTensor implements AutoCloseable {
  private final HandleState state;
  private final Cleaner.Cleanable cleanable;
  private final Tensor view;

  ManagedTensor(
      long pointer,
      ByteBuffer data,
      DType dtype,
      long[] shape,
      long[] strides,
      Device device,
      long address) {
    this.state = new HandleState("ManagedTensor", pointer, Native::tensorRelease, null);
    // A CUDA output (a call on CUDA tensors) is an address on its device: its bytes are not a
    // Java buffer (buffer() and the copy methods throw IllegalStateException).
    this.view =
        device.type() == Device.KDL_CUDA
            ? Tensor.ofManagedDevice(address, device, state, dtype, shape, strides)
            : Tensor.ofManaged(data, state, dtype, shape, strides);
    // The Cleaner watches the buffer over the library's memory, not this object: every view
    // (tensor(), buffer() duplicates, their slices and asFloatBuffer() views) references it,
    // so the memory outlives whichever of them the caller keeps.
    this.cleanable = Handles.CLEANER.register(view.buffer, state);
  }

  public DType dtype() {
    return view.dtype();
  }

  /** Where the output is: a call on CUDA tensors returns CUDA outputs. */
  public Device device() {
    return view.device();
  }

  /**
   * The first element's address (a {@code CUdeviceptr} for a CUDA output, to hand to a CUDA
   * library), valid until {@link #close()}.
   */
  public long address() {
    checkOpen();
    return view.address();
  }

  public long[] shape() {
    return view.shape();
  }

  /** Row-major strides in elements, as the library returned them. */
  public long[] strides() {
    return view.strides();
  }

  public long numel() {
    return view.numel();
  }

  /**
   * The output as a {@link Tensor} (no copy), usable as another call's input while this output
   * is open.
   *
   * @throws IllegalStateException if closed
   */
  public Tensor tensor() {
    checkOpen();
    return view;
  }

  /**
   * A direct buffer over the output's bytes (native order, capacity = the data's size), valid
   * until {@link #close()}.
   *
   * @throws IllegalStateException if closed
   */
  public ByteBuffer buffer() {
    checkOpen();
    return view.buffer();
  }

  /** A copy of the elements (FLOAT32). */
  public float[] toFloatArray() {
    return view.toFloatArray();
  }

  /** A copy of the elements (FLOAT64). */
  public double[] toDoubleArray() {
    return view.toDoubleArray();
  }

  /** A copy of the elements (INT32). */
  public int[] toIntArray() {
    return view.toIntArray();
  }

  /** A copy of the elements (INT64). */
  public long[] toLongArray() {
    return view.toLongArray();
  }

  /** A copy of the elements (BOOL). */
  public boolean[] toBooleanArray() {
    return view.toBooleanArray();
  }

  /** A copy of the raw bytes. */
  public byte[] toByteArray() {
    return view.toByteArray();
  }

  public boolean isClosed() {
    return state.isClosed();
  }

  /** Releases the memory to the library; idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }

  private void checkOpen() {
    if (state.isClosed()) {
      throw new IllegalStateException("ManagedTensor is closed");
    }
  }

  @Override
  public String toString() {
    return "ManagedTensor[" + view.spec() + (isClosed() ? ", closed" : "") + "]";
  }
}
