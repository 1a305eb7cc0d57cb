package dev.guardjit;

/** When a cache miss compiles ({@code gj_compile_mode}). */
public enum CompileMode {
  /** The missing call compiles its entry, then runs it (the default). */
  SYNC(0),
  /**
   * The missing call runs on the eager interpreter at once while its entry compiles on the
   * context's background thread; later calls use the entry once it is published (no compile stall
   * on a new shape).
   */
  ASYNC(1);

  final int value;

  CompileMode(int value) {
    this.value = value;
  }
}
