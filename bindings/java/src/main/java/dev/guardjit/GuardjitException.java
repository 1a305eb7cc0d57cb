package dev.guardjit;

/**
 * A guardjit call failed: the C API returned a {@code gj_error}. {@link #code()} is its
 * status code and {@link #getMessage()} its message, which names the node, input or argument
 * at fault. Misuse of the Java API itself (a closed handle, a buffer that is too small) throws
 * the usual {@link IllegalStateException} / {@link IllegalArgumentException} instead.
 */
public class GuardjitException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode code;
  private final int rawCode;

  /** Thrown by the JNI glue with the C error's code and message. */
  GuardjitException(int rawCode, String message) {
    super(message);
    this.rawCode = rawCode;
    this.code = ErrorCode.fromValue(rawCode);
  }

  public GuardjitException(ErrorCode code, String message) {
    super(message);
    this.code = code;
    this.rawCode = code.value();
  }

  /** The status code. */
  public ErrorCode code() {
    return code;
  }

  /** The numeric code as the library returned it (differs from {@code code().value()} only for
   * a code newer than this binding). */
  public int rawCode() {
    return rawCode;
  }

  @Override
  public String toString() {
    return "GuardjitException[" + code + "]: " + getMessage();
  }
}
