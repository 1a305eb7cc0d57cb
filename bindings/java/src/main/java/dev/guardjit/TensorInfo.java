package dev.guardjit;

import java.util.List;

/**
 * What a graph declares of one input or output (C API 0.12): the dtype and shape its exporter
 * saw ({@code guardjit.export}, an ONNX model's value info).
 *
 * @param name the input's or output's name
 * @param dtype the declared element type, or null where the graph declares none
 * @param dims one entry per dim, or null where the graph declares no rank
 */
public record TensorInfo(String name, DType dtype, List<Dim> dims) {
  /**
   * One declared dim.
   *
   * @param size the static size, or -1 for a dynamic one
   * @param symbol for a dynamic dim, the name of its size ("batch"; dims sharing a symbol have
   *     equal sizes), or null when unnamed or static
   */
  public record Dim(long size, String symbol) {}
}
