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

  /** {@code kDLCUDAHost}: page-locked host memory registered with CUDA. */
  public static final int KDL_CUDA_HOST = 3;

  /** The host. */
  public static Device cpu() {
    return new Device(KDL_CPU, 0);
  }

  /** Page-locked host memory ({@code kDLCUDAHost}), read as host memory beside CUDA tensors. */
  public static Device cudaHost() {
    return new Device(KDL_CUDA_HOST, 0);
  }

  @Override
  public String toString() {
    switch (type) {
      case KDL_CPU:
        return "cpu";
      case KDL_CUDA:
        return "cuda:" + id;
      case KDL_CUDA_HOST:
        return "cuda_host";
      default:
        return "device(" + type + ", " + id + ")";
    }
  }

  /** CUDA device {@code ordinal}. */
  public static Device cuda(int ordinal) {
    return new Device(KDL_CUDA, ordinal);
  }
}
