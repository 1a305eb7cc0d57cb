package dev.guardjit;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * The outputs of one {@link Function#callAlloc} call, in the graph's output order. Closing it
 * closes every output: {@code try (Outputs out = fn.callAlloc(x)) { ... }}. An output may also
 * be closed on its own; closing twice is harmless.
 */
public final class Outputs extends AbstractList<ManagedTensor>
    implements AutoCloseable, RandomAccess {
  private final ManagedTensor[] tensors;

  Outputs(ManagedTensor[] tensors) {
    this.tensors = tensors;
  }

  @Override
  public ManagedTensor get(int index) {
    return tensors[index];
  }

  @Override
  public int size() {
    return tensors.length;
  }

  /** Closes every output. */
  @Override
  public void close() {
    for (ManagedTensor t : tensors) {
      t.close();
    }
  }
}
