package dev.guardjit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Shared helpers: the example graphs, float comparison, pbtxt constants. */
final class TestSupport {
  private TestSupport() {}

  /** The repository's examples/ folder (-Dguardjit.examples, else found above the cwd). */
  static Path examples() {
    String dir = System.getProperty("guardjit.examples");
    if (dir != null) {
      return Path.of(dir);
    }
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("examples/mlp.pbtxt"))) {
        return p.resolve("examples");
      }
    }
    throw new IllegalStateException("examples/ not found; set -Dguardjit.examples");
  }

  static Path example(String name) {
    return examples().resolve(name);
  }

  static void assertClose(float[] expected, float[] actual, double tolerance) {
    assertEquals(expected.length, actual.length, "length");
    for (int i = 0; i < expected.length; ++i) {
      double bound = tolerance * Math.max(1.0, Math.abs(expected[i]));
      if (!(Math.abs(expected[i] - actual[i]) <= bound)) {
        fail("element " + i + ": expected " + expected[i] + ", got " + actual[i] + "\nexpected "
            + Arrays.toString(expected) + "\nactual   " + Arrays.toString(actual));
      }
    }
  }

  static void assertMessageMentions(GuardjitException e, String... words) {
    assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), "empty message");
    for (String w : words) {
      assertTrue(e.getMessage().contains(w), "message '" + e.getMessage() + "' lacks '" + w + "'");
    }
  }

  /** Deterministic pseudo-random floats in [-2, 2). */
  static float[] randomFloats(int n, long seed) {
    java.util.Random r = new java.util.Random(seed);
    float[] v = new float[n];
    for (int i = 0; i < n; ++i) {
      v[i] = r.nextFloat() * 4 - 2;
    }
    return v;
  }

  /** The float32 constants of a pbtxt graph (inline `data` with C escapes), by name. */
  static Map<String, float[]> floatConstants(Path pbtxt) throws IOException {
    String text = Files.readString(pbtxt);
    Pattern header =
        Pattern.compile("constants \\{\\s*name: \"(\\w+)\"\\s*dtype: FLOAT32\\s*(?:sizes: \\d+\\s*)*data: \"");
    Map<String, float[]> result = new HashMap<>();
    Matcher m = header.matcher(text);
    while (m.find()) {
      int end = m.end(); // the string runs to the first unescaped quote
      while (text.charAt(end) != '"') {
        end += text.charAt(end) == '\\' ? 2 : 1;
      }
      byte[] bytes = unescape(text.substring(m.end(), end));
      float[] values = new float[bytes.length / 4];
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
      result.put(m.group(1), values);
    }
    return result;
  }

  /** Protobuf text format's C-style string escapes. */
  static byte[] unescape(String s) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < s.length(); ++i) {
      char c = s.charAt(i);
      if (c != '\\') {
        out.write(c);
        continue;
      }
      char n = s.charAt(++i);
      if (n >= '0' && n <= '7') {
        int v = 0;
        int k = 0;
        while (k < 3 && i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '7') {
          v = v * 8 + (s.charAt(i++) - '0');
          ++k;
        }
        --i;
        out.write(v);
      } else if (n == 'x') {
        out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        switch (n) {
          case 'n' -> out.write('\n');
          case 't' -> out.write('\t');
          case 'r' -> out.write('\r');
          default -> out.write(n);
        }
      }
    }
    return out.toByteArray();
  }

  /** Minimal protobuf writer for hand-made binary graphs. */
  static final class Proto {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Proto varint(int field, long value) {
      tag(field, 0);
      raw(value);
      return this;
    }

    Proto string(int field, String value) {
      return bytes(field, value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    Proto message(int field, Proto value) {
      return bytes(field, value.toBytes());
    }

    Proto bytes(int field, byte[] value) {
      tag(field, 2);
      raw(value.length);
      out.writeBytes(value);
      return this;
    }

    byte[] toBytes() {
      return out.toByteArray();
    }

    private void tag(int field, int wire) {
      raw(((long) field << 3) | wire);
    }

    private void raw(long v) {
      while ((v & ~0x7fL) != 0) {
        out.write((int) ((v & 0x7f) | 0x80));
        v >>>= 7;
      }
      out.write((int) v);
    }
  }
}
