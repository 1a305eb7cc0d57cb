package dev.guardjit;

/** How a function treats sizes ({@code gj_dynamic_mode}). */
public enum DynamicMode {
  /** Static first; sizes that change between compiles become symbolic (the default). */
  AUTO(0),
  /** Every size specialized. */
  STATIC(1),
  /** Every size symbolic from the first compile (sizes 0 and 1 stay specialized). */
  DYNAMIC(2);

  final int value;

  DynamicMode(int value) {
    this.value = value;
  }
}
