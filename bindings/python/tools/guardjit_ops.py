"""What guardjit registers, and torch's Core ATen set to hold it against.

Shared by tools/opinfo.py (the OPINFO.md table) and tests/test_coverage.py.

registered_ops(): `guardjit ops --json` (the CLI: $GUARDJIT_CLI, else
`guardjit` on PATH) as {target: entry}, where an entry carries the op's
schema and what runs it (reference_kernel, cpu_lowering, extern_step,
cuda_lowering). None when the CLI is not found.

library_has(target): the loaded library's own answer, by loading a probe
graph through the Python package (guardjit._fx.library_has_target); used
where the CLI is absent and to cross-check the CLI's list.

core_overloads(): every overload the installed torch tags torch.Tag.core,
enumerated from all registered schemas (dir(torch.ops.aten) only lists the
packets loaded so far, so it undercounts).
"""
import json
import os
import shutil
import subprocess


def find_cli():
    """The guardjit CLI: $GUARDJIT_CLI, else `guardjit` on PATH; None if neither."""
    path = os.environ.get("GUARDJIT_CLI")
    if path:
        return path if os.access(path, os.X_OK) else None
    return shutil.which("guardjit")


def registered_ops(cli=None):
    """{target: {"schema", "reference_kernel", "cpu_lowering", "extern_step",
    "cuda_lowering"}} from `guardjit ops --json`, or None without a CLI."""
    cli = cli or find_cli()
    if cli is None:
        return None
    out = subprocess.run([cli, "ops", "--json"], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    return {entry["target"]: entry for entry in json.loads(out)["ops"]}


def library_has(target):
    """Whether the library the guardjit package loaded registers `target`."""
    from guardjit import _fx
    return _fx.library_has_target(target)


def core_overloads():
    """Sorted names ("aten.add.Tensor") of the overloads torch tags core."""
    import torch
    names = set()
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        packet = getattr(torch.ops.aten, schema.name[len("aten::"):], None)
        if packet is None:
            continue
        overload = getattr(packet, schema.overload_name or "default", None)
        if overload is not None and torch.Tag.core in overload.tags:
            names.add(str(overload))
    return sorted(names)


def core_coverage(registered):
    """(covered, gap): the Core ATen overloads `registered` (a set of
    targets, or a predicate) has and lacks, both sorted."""
    has = registered if callable(registered) else registered.__contains__
    core = core_overloads()
    covered = [name for name in core if has(name)]
    gap = [name for name in core if not has(name)]
    return covered, gap
