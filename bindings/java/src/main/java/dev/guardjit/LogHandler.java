package dev.guardjit;

/**
 * Receives guardjit's log lines (see {@link Guardjit#setLogHandler}).
 *
 * <p>Called from whichever thread logs, including the library's own worker threads (attached
 * to the JVM as daemon threads for the call), one message at a time. It must return quickly
 * and must not call back into guardjit. An exception it throws is discarded.
 */
@FunctionalInterface
public interface LogHandler {
  /**
   * @param topic "guards", "recompiles", "graph_breaks", "codegen" or "warning"
   * @param message the line, without a "[guardjit:...]" prefix
   */
  void log(String topic, String message);
}
