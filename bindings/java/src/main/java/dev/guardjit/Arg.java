package dev.guardjit;

import java.util.Arrays;
import java.util.Objects;

/**
 * One argument of a {@link GraphBuilder} node ({@code gj_arg}): a reference to an earlier
 * input, constant or node, a literal, a list, or a subgraph name; {@link #kw} makes it a
 * keyword argument. Immutable.
 */
public final class Arg {
  // gj_arg_kind
  static final int NONE = 0;
  static final int REF = 1;
  static final int INT = 2;
  static final int FLOAT = 3;
  static final int BOOL = 4;
  static final int STRING = 5;
  static final int DTYPE = 6;
  static final int DEVICE = 7;
  static final int INT_LIST = 8;
  static final int FLOAT_LIST = 9;
  static final int REF_LIST = 10;
  static final int SUBGRAPH = 11;

  final int kind;
  final String name; // keyword, or null
  final long i;
  final double f;
  final String str;
  final DType dtype;
  final Object list; // long[], double[] or String[]

  private Arg(int kind, String name, long i, double f, String str, DType dtype, Object list) {
    this.kind = kind;
    this.name = name;
    this.i = i;
    this.f = f;
    this.str = str;
    this.dtype = dtype;
    this.list = list;
  }

  private static Arg of(int kind, long i, double f, String str, DType dtype, Object list) {
    return new Arg(kind, null, i, f, str, dtype, list);
  }

  /** The value of an earlier input, constant or node. */
  public static Arg ref(String name) {
    return of(REF, 0, 0, Objects.requireNonNull(name, "name"), null, null);
  }

  public static Arg of(long value) {
    return of(INT, value, 0, null, null, null);
  }

  public static Arg of(double value) {
    return of(FLOAT, 0, value, null, null, null);
  }

  public static Arg of(boolean value) {
    return of(BOOL, value ? 1 : 0, 0, null, null, null);
  }

  /** A string literal (e.g. rounding_mode="floor"). */
  public static Arg string(String value) {
    return of(STRING, 0, 0, Objects.requireNonNull(value, "value"), null, null);
  }

  public static Arg of(DType value) {
    return of(DTYPE, 0, 0, null, Objects.requireNonNull(value, "value"), null);
  }

  /** A device: "cpu", "cuda:0". */
  public static Arg device(String device) {
    return of(DEVICE, 0, 0, Objects.requireNonNull(device, "device"), null, null);
  }

  /** An int[] (sizes, dims). */
  public static Arg ints(long... values) {
    return of(INT_LIST, 0, 0, null, null, values.clone());
  }

  public static Arg floats(double... values) {
    return of(FLOAT_LIST, 0, 0, null, null, values.clone());
  }

  /** A Tensor[] of references. */
  public static Arg refs(String... names) {
    for (String n : names) {
      Objects.requireNonNull(n, "names");
    }
    return of(REF_LIST, 0, 0, null, null, names.clone());
  }

  /** Python's None. */
  public static Arg none() {
    return of(NONE, 0, 0, null, null, null);
  }

  /** The name of a subgraph (control-flow branches). */
  public static Arg subgraph(String name) {
    return of(SUBGRAPH, 0, 0, Objects.requireNonNull(name, "name"), null, null);
  }

  /** {@code value} as the keyword argument {@code name}: {@code Arg.kw("alpha", Arg.of(2))}. */
  public static Arg kw(String name, Arg value) {
    return new Arg(
        value.kind, Objects.requireNonNull(name, "name"), value.i, value.f, value.str,
        value.dtype, value.list);
  }

  @Override
  public String toString() {
    String v;
    switch (kind) {
      case REF:
        v = "ref " + str;
        break;
      case INT:
      case BOOL:
        v = Long.toString(i);
        break;
      case FLOAT:
        v = Double.toString(f);
        break;
      case DTYPE:
        v = dtype.toString();
        break;
      case INT_LIST:
        v = Arrays.toString((long[]) list);
        break;
      case FLOAT_LIST:
        v = Arrays.toString((double[]) list);
        break;
      case REF_LIST:
        v = Arrays.toString((String[]) list);
        break;
      case NONE:
        v = "None";
        break;
      default:
        v = '"' + str + '"';
    }
    return name == null ? v : name + "=" + v;
  }
}
