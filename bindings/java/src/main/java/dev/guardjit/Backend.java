package dev.guardjit;

/** What compiles a cache entry on a miss ({@code gj_backend}). */
public enum Backend {
  /** The best available: {@link #CPU_JIT} for CPU tensors. */
  DEFAULT(0),
  /** Specialized eager plans: the reference kernels with shapes resolved once per entry. */
  EAGER(1),
  /** Fused kernels compiled in process by LLVM's ORC JIT. */
  CPU_JIT(2);

  final int value;

  Backend(int value) {
    this.value = value;
  }
}
