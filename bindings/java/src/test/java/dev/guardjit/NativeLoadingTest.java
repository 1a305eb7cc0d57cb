package dev.guardjit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The JNI library loads from the jar it is packed in (bindings/java/test.sh runs so). */
class NativeLoadingTest {
  @Test
  void loadsTheLibraryPackedInTheJar() {
    Native.load();
    String expected = System.getProperty("guardjit.test.jniSource");
    if (expected != null) {
      assertEquals(expected, Native.SOURCE, "where libguardjit_jni.so was loaded from");
    }
    assertTrue(Guardjit.version().startsWith("0."), Guardjit.version());
  }

  @Test
  void platformNamesTheJarFolder() {
    String platform = Native.platform();
    assertTrue(platform.matches("[a-z0-9_]+-[a-z0-9_]+"), platform);
  }
}
