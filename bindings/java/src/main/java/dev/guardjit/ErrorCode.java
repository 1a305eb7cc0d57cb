package dev.guardjit;

/** The C API's {@code gj_error_code}: absl's canonical status codes. */
public enum ErrorCode {
  OK(0),
  CANCELLED(1),
  UNKNOWN(2),
  INVALID_ARGUMENT(3),
  DEADLINE_EXCEEDED(4),
  NOT_FOUND(5),
  ALREADY_EXISTS(6),
  PERMISSION_DENIED(7),
  RESOURCE_EXHAUSTED(8),
  FAILED_PRECONDITION(9),
  ABORTED(10),
  OUT_OF_RANGE(11),
  UNIMPLEMENTED(12),
  INTERNAL(13),
  UNAVAILABLE(14),
  DATA_LOSS(15),
  UNAUTHENTICATED(16);

  private static final ErrorCode[] BY_VALUE = values();

  private final int value;

  ErrorCode(int value) {
    this.value = value;
  }

  /** The numeric value in the C header. */
  public int value() {
    return value;
  }

  /** The code for a numeric value; {@link #UNKNOWN} for one the header does not define. */
  public static ErrorCode fromValue(int value) {
    if (value >= 0 && value < BY_VALUE.length && BY_VALUE[value].value == value) {
      return BY_VALUE[value];
    }
    return UNKNOWN;
  }
}
