package dev.guardjit;

/**
 * Library-wide functions: versions and logging.
 *
 * <p>The native part of the binding, {@code libguardjit_jni.so}, is loaded from {@code
 * java.library.path}, or from the file named by the system property {@code
 * guardjit.jni.library}; it links {@code libguardjit.so}, found by the dynamic linker.
 */
public final class Guardjit {
  private Guardjit() {}

  /** "MAJOR.MINOR.PATCH" of the loaded library. */
  public static String version() {
    return Native.version();
  }

  /** The loaded library's C API version as {@code (major << 16) | minor}. */
  public static int apiVersion() {
    return Native.apiVersion();
  }

  /** The loaded library's C API major version. */
  public static int apiVersionMajor() {
    return apiVersion() >>> 16;
  }

  /** The loaded library's C API minor version. */
  public static int apiVersionMinor() {
    return apiVersion() & 0xffff;
  }

  /**
   * Which topics log, as the GJ_LOGS variable says ("guards,recompiles", "all", ""), replacing
   * what GJ_LOGS set. Warnings always log. Process-wide.
   */
  public static void setLogTopics(String spec) {
    Native.setLogTopics(spec == null ? "" : spec);
  }

  /**
   * Sends guardjit's log lines to {@code handler} instead of stderr; {@code null} restores
   * stderr. Process-wide: the last handler set wins.
   */
  public static void setLogHandler(LogHandler handler) {
    Native.setLogHandler(handler);
  }
}
