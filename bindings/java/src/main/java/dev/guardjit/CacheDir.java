package dev.guardjit;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A compile cache directory as a whole (C API 0.11: {@code gj_cache_dir_inspect}, {@code
 * gj_cache_dir_clear}; {@code guardjit cache stats|verify|clear DIR}), for tools and hosts that
 * maintain one. A context uses one through {@link ContextOptions#cacheDir(String)}.
 */
public final class CacheDir {
  private CacheDir() {}

  /**
   * What {@link #inspect} found ({@code gj_cache_dir_stats}).
   *
   * @param records record files
   * @param bytes their total size
   * @param oldestUseMs last use of the least recently used record (Unix milliseconds; 0 without
   *     records)
   * @param newestUseMs last use of the most recently used record (Unix milliseconds)
   * @param verified with {@code verify}: records whose checks passed
   * @param bad with {@code verify}: records that failed them
   * @param removed with {@code removeBad}: bad records removed
   * @param report a summary by kind of record, then one line per bad record naming the file and
   *     the problem
   */
  public record Stats(
      long records,
      long bytes,
      long oldestUseMs,
      long newestUseMs,
      long verified,
      long bad,
      long removed,
      String report) {}

  /**
   * Counts the records of compile cache directory {@code dir}; with {@code verify}, reads each one
   * whole and checks it as a load would (its digest, its file name against its key and, with a
   * non-null {@code key}, its signature), and with {@code removeBad} also removes those that fail.
   * {@link ErrorCode#NOT_FOUND} when {@code dir} does not exist. Safe while other processes use the
   * directory.
   *
   * @param key the key the records are signed with, or null
   */
  public static Stats inspect(Path dir, String key, boolean verify, boolean removeBad) {
    Objects.requireNonNull(dir, "dir");
    Native.load();
    long[] v = new long[7];
    String report = Native.cacheDirInspect(dir.toString(), key, verify, removeBad, v);
    return new Stats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], report);
  }

  /**
   * Removes every record (and leftover temporary file) of compile cache directory {@code dir} and
   * returns how many files it removed. {@link ErrorCode#NOT_FOUND} when {@code dir} does not exist.
   */
  public static long clear(Path dir) {
    Objects.requireNonNull(dir, "dir");
    Native.load();
    return Native.cacheDirClear(dir.toString());
  }
}
