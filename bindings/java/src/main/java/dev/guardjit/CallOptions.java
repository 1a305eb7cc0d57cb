package dev.guardjit;

import java.time.Duration;

/**
 * Options of one call ({@code gj_call_options}). Immutable; the {@code with*} methods return
 * a changed copy: {@code CallOptions.DEFAULT.withTimeout(Duration.ofMillis(5))}.
 */
public final class CallOptions {
  /** The library's defaults: grad mode on, not deterministic, no limit, the default stream. */
  public static final CallOptions DEFAULT = new CallOptions(-1, -1, 0, null, null, 0, 0);

  final int gradMode; // -1 = default
  final int deterministic; // -1 = default
  final long timeoutUs;
  final byte[] requiresGrad;
  final CancelFlag cancel;
  final long stream; // a CUstream; 0 = the legacy default stream
  final int synchronize;

  private CallOptions(
      int gradMode,
      int deterministic,
      long timeoutUs,
      byte[] requiresGrad,
      CancelFlag cancel,
      long stream,
      int synchronize) {
    this.gradMode = gradMode;
    this.deterministic = deterministic;
    this.timeoutUs = timeoutUs;
    this.requiresGrad = requiresGrad;
    this.cancel = cancel;
    this.stream = stream;
    this.synchronize = synchronize;
  }

  /** torch.is_grad_enabled(), which cache entries guard on (default true). */
  public CallOptions withGradMode(boolean enabled) {
    return new CallOptions(
        enabled ? 1 : 0, deterministic, timeoutUs, requiresGrad, cancel, stream, synchronize);
  }

  /** torch.are_deterministic_algorithms_enabled() (default false). */
  public CallOptions withDeterministic(boolean enabled) {
    return new CallOptions(
        gradMode, enabled ? 1 : 0, timeoutUs, requiresGrad, cancel, stream, synchronize);
  }

  /** Per input, whether the host's tensor requires grad (DLPack does not carry it). */
  public CallOptions withRequiresGrad(boolean... perInput) {
    byte[] flags = new byte[perInput.length];
    for (int i = 0; i < flags.length; ++i) {
      flags[i] = perInput[i] ? (byte) 1 : (byte) 0;
    }
    return new CallOptions(gradMode, deterministic, timeoutUs, flags, cancel, stream, synchronize);
  }

  /**
   * The call fails with {@link ErrorCode#DEADLINE_EXCEEDED} once this long has passed since it
   * started (compiling on a miss included), with no output written; {@link Duration#ZERO} =
   * no limit. Microsecond resolution.
   */
  public CallOptions withTimeout(Duration timeout) {
    long us = timeout.toNanos() / 1000;
    if (us < 0) {
      throw new IllegalArgumentException("negative timeout " + timeout);
    }
    if (us == 0 && !timeout.isZero()) {
      us = 1;
    }
    return new CallOptions(gradMode, deterministic, us, requiresGrad, cancel, stream, synchronize);
  }

  /** A flag that cancels the call when set; null = none. */
  public CallOptions withCancelFlag(CancelFlag flag) {
    return new CallOptions(
        gradMode, deterministic, timeoutUs, requiresGrad, flag, stream, synchronize);
  }

  /**
   * The {@code CUstream} (its address, as CUDA bindings for Java hold it) that a call on CUDA
   * tensors runs on; 0, the default, is the legacy default stream. The call enqueues on the
   * stream and returns; outputs are ready when the stream reaches them, and inputs must stay
   * valid until then. Calls on CPU tensors, all that {@link Tensor} holds today, ignore it.
   */
  public CallOptions withStream(long cuStream) {
    return new CallOptions(
        gradMode, deterministic, timeoutUs, requiresGrad, cancel, cuStream, synchronize);
  }

  /**
   * Makes a call on CUDA tensors wait for its stream before returning and report a device-side
   * check that failed during the call (default false). Calls on CPU tensors ignore it.
   */
  public CallOptions withSynchronize(boolean enabled) {
    return new CallOptions(
        gradMode, deterministic, timeoutUs, requiresGrad, cancel, stream, enabled ? 1 : 0);
  }
}
