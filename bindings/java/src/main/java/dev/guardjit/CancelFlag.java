package dev.guardjit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A flag that stops the calls it is passed to ({@link CallOptions#withCancelFlag}): {@link
 * #cancel()} from any thread makes a running call return {@link ErrorCode#CANCELLED} at its
 * next check (before each step of the compiled program and each parallel chunk of a kernel),
 * with no output written; calls started while it is set fail at once. The library reads it
 * as an {@code int32_t} in native memory; one flag may serve many calls. {@link #reset()}
 * clears it.
 */
public final class CancelFlag {
  private static final VarHandle INT =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

  final ByteBuffer word = alignedWord();
  final long address = Native.bufferAddress(word);

  private static ByteBuffer alignedWord() {
    ByteBuffer raw = ByteBuffer.allocateDirect(8);
    int misalignment = raw.alignmentOffset(0, 4);
    return raw.slice(misalignment == 0 ? 0 : 4 - misalignment, 4)
        .order(ByteOrder.nativeOrder());
  }

  public void cancel() {
    INT.setVolatile(word, 0, 1);
  }

  public void reset() {
    INT.setVolatile(word, 0, 0);
  }

  public boolean isCancelled() {
    return (int) INT.getVolatile(word, 0) != 0;
  }
}
