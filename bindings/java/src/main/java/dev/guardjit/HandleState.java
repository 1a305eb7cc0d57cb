package dev.guardjit;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The native side of one handle: its pointer, a count of calls using it, and
 * whether it has been closed. It is also the handle's {@link
 * java.lang.ref.Cleaner} action, so it must never reference the handle
 * object.
 *
 * <p>Closing marks the state closed; the native destroy function runs once,
 * when the handle is closed and no call is using it (at close if idle,
 * otherwise when the last call returns). So closing a handle while another
 * thread is inside a call on it is safe: the call finishes, then the handle
 * is destroyed. A child handle (a function of a context) holds one use of its
 * parent until the child is destroyed, which keeps the C API's rule that a
 * context outlives its graphs and functions.
 */
final class HandleState implements Runnable {
  private static final long CLOSED = Long.MIN_VALUE;

  private final AtomicLong state = new AtomicLong();
  private final long pointer;
  private final LongConsumer destroy;
  private final HandleState parent;
  private final String kind;

  /**
   * @param parent a state this one holds a use of (acquired by the caller),
   *     released after {@code destroy}; may be null
   */
  HandleState(String kind, long pointer, LongConsumer destroy, HandleState parent) {
    this.kind = kind;
    this.pointer = pointer;
    this.destroy = destroy;
    this.parent = parent;
  }

  /**
   * Marks one call using the handle and returns its pointer; pair with
   * {@link #release()} in a finally block.
   *
   * @throws IllegalStateException if the handle is closed
   */
  long acquire() {
    for (; ; ) {
      long s = state.get();
      if (s < 0) {
        throw new IllegalStateException(kind + " is closed");
      }
      if (s == Long.MAX_VALUE) {
        throw new IllegalStateException(kind + ": too many concurrent uses");
      }
      if (state.compareAndSet(s, s + 1)) {
        return pointer;
      }
    }
  }

  void release() {
    if (state.decrementAndGet() == CLOSED) {
      destroyNow();
    }
  }

  boolean isClosed() {
    return state.get() < 0;
  }

  /** Closes (the Cleaner action; Cleanable.clean() runs it at most once). */
  @Override
  public void run() {
    for (; ; ) {
      long s = state.get();
      if (s < 0) {
        return;
      }
      if (state.compareAndSet(s, s | CLOSED)) {
        if (s == 0) {
          destroyNow();
        }
        return;
      }
    }
  }

  private void destroyNow() {
    try {
      destroy.accept(pointer);
    } finally {
      if (parent != null) {
        parent.release();
      }
    }
  }
}
