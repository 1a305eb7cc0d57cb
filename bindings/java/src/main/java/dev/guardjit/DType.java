package dev.guardjit;

/** Element types, numbered as the C API's {@code gj_dtype}, with their DLPack encoding. */
public enum DType {
  FLOAT32(1, DLCode.FLOAT, 32),
  FLOAT64(2, DLCode.FLOAT, 64),
  FLOAT16(3, DLCode.FLOAT, 16),
  BFLOAT16(4, DLCode.BFLOAT, 16),
  INT8(5, DLCode.INT, 8),
  UINT8(6, DLCode.UINT, 8),
  INT16(7, DLCode.INT, 16),
  INT32(8, DLCode.INT, 32),
  INT64(9, DLCode.INT, 64),
  /** One byte per element, 0 or 1 (DLPack's kDLBool, {@code GJ_DL_BOOL}). */
  BOOL(10, DLCode.BOOL, 8);

  /** DLPack type codes (dlpack.h's DLDataTypeCode plus GJ_DL_BOOL). */
  static final class DLCode {
    static final int INT = 0;
    static final int UINT = 1;
    static final int FLOAT = 2;
    static final int BFLOAT = 4;
    static final int BOOL = 6;

    private DLCode() {}
  }

  private final int value;
  private final int dlCode;
  private final int bits;

  DType(int value, int dlCode, int bits) {
    this.value = value;
    this.dlCode = dlCode;
    this.bits = bits;
  }

  /** The {@code gj_dtype} / guardjit.proto.DType number. */
  public int value() {
    return value;
  }

  /** Bytes per element. */
  public int itemSize() {
    return bits / 8;
  }

  int dlCode() {
    return dlCode;
  }

  int bits() {
    return bits;
  }

  static DType fromDLPack(long code, long bits) {
    for (DType d : values()) {
      if (d.dlCode == code && d.bits == bits) {
        return d;
      }
    }
    throw new IllegalStateException("guardjit returned an unknown DLPack dtype: code " + code
        + ", bits " + bits);
  }
}
