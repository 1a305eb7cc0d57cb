package dev.guardjit;

/** How a function runs its CUDA calls ({@code gj_function_mode}); CPU calls ignore it. */
public enum FunctionMode {
  /** Plain kernel launches (the default). */
  DEFAULT(0),
  /**
   * torch.compile's {@code mode="reduce-overhead"}: each CUDA cache entry records a CUDA graph per
   * size key on its second call and replays it afterwards, patching new input and output addresses
   * into the captured kernels.
   */
  REDUCE_OVERHEAD(1);

  final int value;

  FunctionMode(int value) {
    this.value = value;
  }
}
