package dev.guardjit;

import java.lang.ref.Cleaner;

/** The one Cleaner of the binding: a daemon thread that frees unreachable handles. */
final class Handles {
  private Handles() {}

  static final Cleaner CLEANER = Cleaner.create();
}
