"""OPINFO.md from tools/opinfo.py's results: per-overload pass rates on the
eager backend and the CPU JIT, what the failures are, the registered
overloads no sample reaches, the Core ATen gap and the overloads OpInfo
samples reach that guardjit lacks. Written by `opinfo.py --write`."""
import collections

import guardjit_ops
from opinfo import COMMAND, _bounded, environment, per_overload

# What the failures of an overload are, shown in the table's last column
# (overload -> text): a difference guardjit means to keep, or a bug found
# here and reported. Listed or not, a failure still counts against the pass
# counts: the column explains the number, it does not hide it. "wrong64"
# samples (guardjit matches torch's own op computed in float64, or is as
# close to it as torch's own kernel) are explained in the column without an
# entry here.
DOCUMENTED = {
    "aten._native_batch_norm_legit.default":
        "difference: training=True updates running_mean/running_var in place; guardjit "
        "graphs are functional and refuse it (UnimplementedError naming the argument)",
    "aten.convolution.default":
        "difference: guardjit convolves floating dtypes only (InvalidArgumentError); "
        "torch's CPU kernel also takes int64",
    "aten.as_strided.default":
        "difference: DLPack carries no storage, so the storage offset counts from the "
        "input's first element and the storage ends with the input: a view of a larger "
        "storage (as_strided.partial_views) reads from its own start or is OutOfRange",
    "aten.index.Tensor":
        "difference: a bool mask index is refused (UnimplementedError naming "
        "'indices'): its result size depends on values; convert it with nonzero",
    "aten.index_put.default":
        "difference: a bool mask index is refused (UnimplementedError naming "
        "'indices'); convert it with nonzero",
    "aten.hardtanh.default":
        "difference: uint8 with negative limits is refused (the check older torch had); "
        "torch 2.15 clamps",
}


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rate(counter, run):
    return f"{counter['pass']}/{run}" if run else "-"


def _explanation(target, row):
    """The table's last column: DOCUMENTED's entry and the float64 count."""
    parts = []
    if target in DOCUMENTED:
        parts.append(DOCUMENTED[target])
    n64 = max(row["eager"]["wrong64"], row["jit"]["wrong64"])
    if n64:
        parts.append(f"difference: {n64} wrong samples match torch's own op computed in "
                     "float64 and rounded (torch's reduced-precision CPU kernel rounds "
                     "in between; guardjit's is the more accurate)")
    return "; ".join(parts)


def write_table(results, path, registry=None, env=None):
    """OPINFO.md: per-overload pass rates, the skips, the Core ATen gap."""
    env = env or environment()
    rows = per_overload(results)
    registered = {t: r for t, r in rows.items() if r["registered"]}
    unregistered = {t: r for t, r in rows.items() if not r["registered"]}
    has = (registry.__contains__ if registry is not None else guardjit_ops.library_has)
    covered, gap = guardjit_ops.core_coverage(has)
    total = collections.Counter()
    for row in registered.values():
        total["run"] += row["run"]
        total["eager"] += row["eager"]["pass"]
        total["jit"] += row["jit"]["pass"]
        total["skipped"] += sum(row["skipped"].values())
        for backend in ("eager", "jit"):
            for status in ("wrong", "wrong64", "error"):
                total[f"{backend}_{status}"] += row[backend][status]
    crashed = {k: r["crash"] for k, r in results["opinfos"].items() if "crash" in r}
    samples = ("all samples" if results["max_samples"] is None
               else f"at most {results['max_samples']} samples")
    lines = [
        "# guardjit on PyTorch's OpInfo sample inputs",
        "",
        "Generated; do not edit. Regenerate, with the library and the package installed "
        "(bindings/python/README.md) and `guardjit` on PATH, from the repository root:",
        "",
        f"    {COMMAND}",
        "",
        "It also rewrites `bindings/python/tools/opinfo_baseline.json`, the per OpInfo and "
        "dtype pass counts `tests/test_opinfo.py` fails below. How samples are traced, "
        "attributed to an overload and compared: the docstring of `tools/opinfo.py`.",
        "",
        f"torch {env['torch']}, guardjit library {env['library']}; dtypes "
        f"{', '.join(results['dtypes'])}; {samples} per OpInfo and dtype; "
        f"{len(results['opinfos'])} OpInfos in {results['seconds']:.0f} s "
        f"({results.get('cpu_seconds', 0):.0f} s CPU) with {results['jobs']} workers.",
        "",
        f"**{len(registered)} registered overloads** reached by OpInfo samples as one call: "
        f"{total['run']} samples run; eager passes {total['eager']}, CPU JIT passes "
        f"{total['jit']}. Not passing (eager / JIT): {total['eager_error']} / "
        f"{total['jit_error']} errors (guardjit refused), {total['eager_wrong']} / "
        f"{total['jit_wrong']} wrong, {total['eager_wrong64']} / {total['jit_wrong64']} "
        f"wrong where guardjit matches torch's float64 result. {total['skipped']} samples "
        "skipped.",
        "",
        "Columns: *eager* and *JIT* are passes / samples run on `Context(backend=\"eager\")` "
        "and `Context(backend=\"cpu_jit\")`; *JIT fused* counts the samples whose JIT "
        "entry ran as compiled kernels only (explain(): at least one fused kernel, no eager "
        "node); the rest ran the reference kernel inside the compiled program, where the "
        "lowering declines (rounding division, integer pow/fmod/remainder) or the op has "
        "none (`guardjit ops --json`), or needed no kernel (views); *wrong* samples gave other values, shapes or dtypes "
        "than torch (in brackets: of those, the ones that match torch's own op computed in "
        "float64 and rounded, or are as close to it as torch's own kernel), *error* samples "
        "made guardjit raise; *first failure* is `OpInfo dtype #sample (the call's "
        "arguments): status: reason` (`wrong64`: wrong, but equal to torch's op in float64 "
        "or as close to it as torch).",
        "",
        "| overload | OpInfos | eager | JIT | JIT fused | wrong e/j [float64] "
        "| error e/j | skipped | first failure | difference or bug |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for target in sorted(registered):
        row = registered[target]
        e, j = row["eager"], row["jit"]
        skipped = sum(row["skipped"].values())
        skip_text = str(skipped)
        if skipped:
            reason, count = row["skipped"].most_common(1)[0]
            skip_text += f" ({count}: {_bounded(reason, 80)})"
        first_e = row["first"].get("eager", (None, ""))[1]
        first_j = row["first"].get("jit", (None, ""))[1]
        if first_e == first_j:
            first = first_e
        else:
            first = "; ".join(f"{name}: {text}" for name, text in
                              (("eager", first_e), ("JIT", first_j)) if text)
        wrong = f"{e['wrong'] + e['wrong64']}/{j['wrong'] + j['wrong64']}"
        if e["wrong64"] or j["wrong64"]:
            wrong += f" [{e['wrong64']}/{j['wrong64']}]"
        lines.append("| " + " | ".join(_cell(c) for c in (
            f"`{target}`", ", ".join(row["opinfos"]),
            _rate(e, row["run"]), _rate(j, row["run"]), str(row["jit_compiled"]),
            wrong, f"{e['error']}/{j['error']}", skip_text, _bounded(first, 400),
            _explanation(target, row))) + " |")
    lines.append("")
    if crashed:
        lines += ["## OpInfos whose worker crashed", ""]
        lines += [f"- `{k}`: {_cell(v)}" for k, v in sorted(crashed.items())]
        lines.append("")
    if registry is not None:
        unreached = sorted(t for t in registry if t not in registered and t.startswith("aten."))
        lines += [f"## Registered ATen overloads no OpInfo sample reaches as one call "
                  f"({len(unreached)})", "",
                  "Their OpInfos call them through several ops, or have none (Scalar "
                  "overloads: torch.add(x, 2) dispatches to aten.add.Tensor).", "",
                  ", ".join(f"`{t}`" for t in unreached), ""]
    lines += [
        f"## Core ATen coverage: {len(covered)} of {len(covered) + len(gap)}",
        "",
        f"The overloads torch {env['torch']} tags `torch.Tag.core` (from every registered "
        f"schema) that guardjit does not register ({len(gap)}; `tests/test_coverage.py` "
        "prints the same list):",
        "",
        ", ".join(f"`{t}`" for t in gap),
        "",
        f"## Overloads OpInfo samples reach as one call that guardjit lacks "
        f"({len(unregistered)})",
        "",
        "Samples seen per overload (OpInfos): what this table checks once they are added. "
        "An OpInfo whose first three samples reach no registered op stops there, so most "
        "counts here are 3 or fewer; a regeneration after the op lands runs them all.",
        "",
    ]
    lines += [f"- `{t}`: {r['samples']} ({', '.join(r['opinfos'][:6])}"
              f"{', ...' if len(r['opinfos']) > 6 else ''})"
              for t, r in sorted(unregistered.items())]
    lines.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
