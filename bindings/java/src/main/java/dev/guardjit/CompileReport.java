package dev.guardjit;

/**
 * What {@link Graph#compileReport} returns: the report's text for people (specialized graph,
 * fusion plan, then the target's code) and, with emulation, the comparison against eager.
 *
 * @param text the report
 * @param checked whether the graph was run on the target (emulation was asked for)
 * @param runCode {@link ErrorCode#OK}, or why the target's run failed (the text says more)
 * @param maxAbsError largest |target - eager| over every output element
 * @param withinTolerance every element within its dtype's tolerance (false if the run failed)
 */
public record CompileReport(
    String text, boolean checked, ErrorCode runCode, double maxAbsError, boolean withinTolerance) {}
