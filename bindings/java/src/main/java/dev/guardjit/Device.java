package dev.guardjit;

/**
 * A DLPack device ({@code DLDevice}): where {@link Context#deviceMemoryStats} reads memory.
 *
 * @param type {@code kDLCPU} (1) or {@code kDLCUDA} (2)
 * @param id the device ordinal (0 for the host)
 */
public record Device(int type, int id) {
  /** {@code kDLCPU}. */
  public static final int KDL_CPU = 1;

  /** {@code kDLCUDA}. */
  public static final int KDL_CUDA = 2;

  /** The host. */
  public static Device cpu() {
    return new Device(KDL_CPU, 0);
  }

  /** CUDA device {@code ordinal}. */
  public static Device cuda(int ordinal) {
    return new Device(KDL_CUDA, ordinal);
  }
}
