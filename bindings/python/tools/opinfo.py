#!/usr/bin/env python3
"""PyTorch's OpInfo sample inputs through guardjit's eager backend and CPU JIT.

Regenerates bindings/python/OPINFO.md and tools/opinfo_baseline.json (the
pass counts tests/test_opinfo.py holds the library to), with the library
and the package installed (bindings/python/README.md):

    python bindings/python/tools/opinfo.py --write

Other uses: `--ops add,nn.functional.relu --dtypes float32 -v` runs a few
OpInfos and prints every failure; `--check` compares with the baseline and
exits 1 when a pass count dropped; `--json PATH` keeps every sample's result.

How a sample becomes a guardjit run: torch.testing._internal's op_db gives
each OpInfo's sample inputs (CPU, requires_grad=False, each dtype of DTYPES
the OpInfo supports; the RNG seeded before each sample as torch's own
tests do outside a test, so a subset makes the same samples as a full run).
The OpInfo's op runs on the sample under a TorchDispatchMode that records
every ATen call it makes (the level torch.fx.experimental.proxy_tensor.make_fx
traces at, after autograd and CompositeImplicitAutograd decompositions:
torch.add -> aten.add.Tensor, F.relu6 -> aten.hardtanh.default). A sample
counts for an overload only when it made exactly one call, of an overload
the library registers. That call becomes a one-node FX graph (its tensors
as placeholders, tuple results as getitems), converted by the package's own
converter (guardjit._fx.convert, the one guardjit.export uses: arguments
mapped by the op's schema), loaded with Graph.from_text and run on the
call's tensors by a Function on Context(backend="eager") and one on
Context(backend="cpu_jit") (one thread each). Every output is compared
with the call's own result by torch.testing.assert_close (default
tolerances per dtype, NaN where torch has NaN; shape and dtype only for the
UNINITIALIZED overloads). Per backend a sample passes, is wrong (values,
shape or dtype differ) or errors (guardjit raised: a load, compile or run
error). Samples are skipped, with the reason, when the op made several
calls, none, or one the library lacks, the op is random, a tensor has a
dtype or layout guardjit has no kind for, or the converter cannot write an
argument.

Each OpInfo runs in a worker process (--jobs of them), so a crash in the
library is recorded against its OpInfo ("crash") instead of ending the run.
An OpInfo whose first three samples never reach a registered op, or whose
first dtype's samples never trace to one, is not run further.
"""
import argparse
import collections
import fnmatch
import json
import operator
import os
import re
import selectors
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(HERE)
TABLE_PATH = os.path.join(PACKAGE_DIR, "OPINFO.md")
BASELINE_PATH = os.path.join(HERE, "opinfo_baseline.json")
COMMAND = "python bindings/python/tools/opinfo.py --write"

# guardjit's element types, as torch names them.
DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool")

# Overloads whose outputs have no defined values: shape and dtype compared.
UNINITIALIZED = frozenset({
    "aten.empty.memory_format", "aten.empty_strided.default", "aten.empty_like.default",
    "aten.new_empty.default", "aten.new_empty_strided.default",
})

# explain()'s compile line: "(jit: 1 fused kernels, 0 eager nodes)".
JIT_SUMMARY = re.compile(r"jit: (\d+) fused kernels?, (\d+) eager nodes?")

PREFILTER_SAMPLES = 3
REASON_CHARS = 240
CASE_FIELDS = ("opinfo", "dtype", "index", "target", "skip", "sample", "eager", "jit",
               "jit_compiled")


_MISMATCH = re.compile(
    r"Mismatched elements: (\d+) / (\d+).*?Greatest absolute difference: (\S+) at index "
    r"(\([^)]*\)).*?Greatest relative difference: (\S+)", re.S)
_ERROR_PREFIX = re.compile(r"^(gj_\w+: )?(function '[^']*': )?(node '[^']*' \([^)]*\): )?")


def _compact_mismatch(message):
    """assert_close's message in one line: "3/25 differ, max abs 0.001 at (0, 1), rel 0.002"."""
    m = _MISMATCH.search(message)
    if m:
        return (f"{m.group(1)}/{m.group(2)} differ, max abs {float(m.group(3)):.3g} at "
                f"{m.group(4)}, rel {float(m.group(5)):.3g}")
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def _bounded(text, limit=REASON_CHARS):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --------------------------------------------------------------------------
# Worker side: one OpInfo's samples through torch and guardjit.


class _Worker:
    def __init__(self, dtypes, max_samples):
        import torch
        import guardjit
        from guardjit import _fx
        from torch.testing._internal import common_utils
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.utils import _pytree as pytree
        from torch.utils._python_dispatch import TorchDispatchMode
        self.torch, self.guardjit, self.fx = torch, guardjit, _fx
        self.pytree, self.TorchDispatchMode = pytree, TorchDispatchMode
        self.set_rng_seed, self.seed = common_utils.set_rng_seed, common_utils.SEED
        self.ops = opinfo_index(op_db)
        self.dtypes = [getattr(torch, d) for d in dtypes]
        self.max_samples = max_samples
        self.contexts = {
            "eager": guardjit.Context(num_threads=1, backend="eager"),
            "jit": guardjit.Context(num_threads=1, backend="cpu_jit"),
        }
        self.supported = frozenset(getattr(torch, d) for d in DTYPES)

    # What a value looks like in a failure report: f32[5, 5], 2.5, ...
    def describe(self, value):
        torch = self.torch
        if isinstance(value, torch.Tensor):
            short = str(value.dtype).replace("torch.", "")
            text = f"{short}{list(value.shape)}"
            if value.numel() > 1 and not value.is_contiguous():
                text += "(strided)"
            return text
        if isinstance(value, (list, tuple)):
            inner = ", ".join(self.describe(v) for v in value)
            if isinstance(value, list):
                return f"[{inner}]"
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}={self.describe(v)}" for k, v in value.items()) + "}"
        return repr(value)

    def describe_call(self, args, kwargs):
        parts = [self.describe(a) for a in args]
        parts += [f"{k}={self.describe(v)}" for k, v in kwargs.items()]
        return _bounded("(" + ", ".join(parts) + ")", 200)

    def trace(self, op, sample):
        """The ATen calls one sample makes: [(overload, args, kwargs, result)],
        recorded by a TorchDispatchMode (the level make_fx traces at: after
        autograd and CompositeImplicitAutograd decompositions)."""
        calls = []
        TorchDispatchMode = self.TorchDispatchMode

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                result = func(*args, **kwargs)
                calls.append((func, args, kwargs, result))
                return result

        with Record():
            op(sample.input, *sample.args, **sample.kwargs)
        return calls

    def one_node_graph(self, func, args, kwargs, result):
        """An FX graph of the one call: its tensors as placeholders, its
        outputs (getitems of a tuple or list result) as the graph's; with the
        input tensors and torch's outputs in the same order."""
        torch, fx = self.torch, self.torch.fx
        graph = fx.Graph()
        tensors = []

        def lift(value):
            if isinstance(value, torch.Tensor):
                node = graph.placeholder(f"t{len(tensors)}")
                node.meta["val"] = value
                tensors.append(value)
                return node
            return value

        node_args = self.pytree.tree_map(lift, args)
        node_kwargs = self.pytree.tree_map(lift, kwargs)
        node = graph.call_function(func, tuple(node_args), dict(node_kwargs))
        if isinstance(result, (tuple, list)):
            outputs = [graph.call_function(operator.getitem, (node, i))
                       for i in range(len(result))]
            expected = list(result)
        else:
            outputs, expected = [node], [result]
        graph.output(outputs)
        return fx.GraphModule(torch.nn.Module(), graph), tensors, expected

    def run_backend(self, backend, text, tensors):
        """(status, reason, outputs as torch tensors, explain() text)."""
        guardjit, torch = self.guardjit, self.torch
        try:
            graph = guardjit.Graph.from_text(text, context=self.contexts[backend])
            fn = guardjit.Function(graph, dynamic="static")
            actual = [torch.from_dlpack(o) for o in fn(*tensors)]
        except guardjit.Error as e:  # the overload is in the row: drop the node's name
            message = _ERROR_PREFIX.sub("", e.message)
            return "error", _bounded(f"{type(e).__name__}: {message}"), None, None
        except Exception as e:  # the binding or DLPack refused: still not a pass
            return "error", _bounded(f"{type(e).__name__}: {e}"), None, None
        return None, None, actual, fn.explain() if backend == "jit" else None

    def mismatch(self, actual, expected, values=True):
        """None when every output matches, else why not."""
        torch = self.torch
        if len(actual) != len(expected):
            return f"{len(actual)} outputs, torch has {len(expected)}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            try:
                if values:
                    torch.testing.assert_close(a, e, equal_nan=True)
                elif a.shape != e.shape or a.dtype != e.dtype:
                    raise AssertionError(f"{a.dtype}{list(a.shape)} where torch has "
                                         f"{e.dtype}{list(e.shape)}")
            except AssertionError as err:
                return _bounded(f"output {k}: {_compact_mismatch(str(err))}")
        return None

    def float64_reference(self, func, args, kwargs, expected):
        """The call with every floating tensor in float64, its outputs as
        float64 computes them; None where that is not the same computation
        (no float16/bfloat16/float32 tensor, or the op refuses)."""
        torch = self.torch
        low = (torch.float16, torch.bfloat16, torch.float32)
        leaves = self.pytree.tree_leaves((args, kwargs))
        if not any(isinstance(t, torch.Tensor) and t.dtype in low for t in leaves):
            return None

        def up(v):
            return v.double() if isinstance(v, torch.Tensor) and v.dtype in low else v
        try:
            result = func(*self.pytree.tree_map(up, args), **self.pytree.tree_map(up, kwargs))
        except Exception:
            return None
        result = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(result) != len(expected):
            return None
        if not all(isinstance(r, torch.Tensor) and r.shape == e.shape
                   for r, e in zip(result, expected)):
            return None
        return result

    def as_close_as_torch(self, actual, expected, exact):
        """`actual`'s largest error against `exact` (the float64 result) is
        no larger than torch's own `expected`'s, within the dtype's default
        tolerance, and the two have NaNs and infinities in the same places:
        they differ by rounding (a K-term sum of float32 products rounded in
        another order, say), not by a bug."""
        torch = self.torch
        tolerances = {torch.float32: (1.3e-6, 1e-5), torch.float16: (1e-3, 1e-5),
                      torch.bfloat16: (1.6e-2, 1e-5)}
        for a, e, x in zip(actual, expected, exact):
            if e.dtype not in tolerances or a.shape != e.shape or a.dtype != e.dtype:
                return False
            rtol, atol = tolerances[e.dtype]
            a, e, x = a.double(), e.double(), x.double()
            finite = e.isfinite()
            if not bool((a.isfinite() == finite).all()) or not bool(
                    (a[~finite].nan_to_num(0) == e[~finite].nan_to_num(0)).all()):
                return False
            if not bool(finite.any()):
                continue
            a, e, x = a[finite], e[finite], x[finite]
            ours = (a - x).abs().max().item()
            theirs = (e - x).abs().max().item()
            if not ours <= theirs + atol + rtol * x.abs().max().item():
                return False
        return True

    def run_sample(self, op, sample, record):
        """Fills record's target, skip, sample and backend results; returns
        the overloads the sample's trace called."""
        torch = self.torch
        record["sample"] = self.describe_call((sample.input,) + tuple(sample.args),
                                              sample.kwargs)
        try:
            calls = self.trace(op, sample)
        except Exception as e:
            record["skip"] = _bounded(f"trace failed: {type(e).__name__}: {e}", 120)
            return []
        targets = [str(func) for func, _, _, _ in calls]
        if not calls:
            record["skip"] = "the trace has no op"
            return targets
        if len(calls) > 1:
            record["skip"] = "traces to several ops"
            return targets
        func, args, kwargs, result = calls[0]
        record["sample"] = self.describe_call(args, kwargs)  # what guardjit is given
        target = targets[0]
        record["target"] = target
        if not self.fx.library_has_target(target):
            record["skip"] = "not registered"
            return targets
        if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
            record["skip"] = "random op"
            return targets
        gm, tensors, expected = self.one_node_graph(func, args, kwargs, result)
        for t in tensors:
            if t.layout != torch.strided or t.device.type != "cpu":
                record["skip"] = f"a {t.layout} tensor on {t.device}"
                return targets
            if t.dtype not in self.supported:
                record["skip"] = f"a {str(t.dtype).replace('torch.', '')} tensor"
                return targets
        if not all(isinstance(e, torch.Tensor) for e in expected):
            record["skip"] = "an output is not a tensor"
            return targets
        if any(e.dtype not in self.supported for e in expected):
            record["skip"] = "an output dtype guardjit lacks"
            return targets
        try:
            text = self.fx.convert(gm, "opinfo").to_text()
        except self.fx.ConversionError as e:
            record["skip"] = _bounded(f"not expressible: {e}", 160)
            return targets
        values = target not in UNINITIALIZED
        reference = []  # the float64 result, computed once if needed
        for backend in ("eager", "jit"):
            status, reason, actual, explain = self.run_backend(backend, text, tensors)
            if status is None:
                reason = self.mismatch(actual, expected, values)
                status = "pass" if reason is None else "wrong"
            if status == "wrong" and values:
                if not reference:
                    reference.append(self.float64_reference(func, args, kwargs, expected))
                exact = reference[0]
                if exact is not None and self.mismatch(
                        actual, [r.to(e.dtype) for r, e in zip(exact, expected)]) is None:
                    status = "wrong64"
                    reason += " [= torch in float64]"
                elif exact is not None and self.as_close_as_torch(actual, expected, exact):
                    status = "wrong64"
                    reason += " [as close to torch in float64 as torch's own kernel]"
            record[backend] = [status, reason]
            if explain is not None:
                match = JIT_SUMMARY.search(explain)
                record["jit_compiled"] = bool(match) and int(match.group(2)) == 0 \
                    and int(match.group(1)) > 0
        return targets

    def samples(self, op, dtype):
        """op.sample_inputs("cpu", dtype) as torch's tests make them outside a
        test (the RNG seeded with common_utils.SEED before each sample),
        without OpInfo.sample_inputs' stack inspection (slow, and it seeds
        differently under unittest)."""
        generator = iter(op.sample_inputs_func(op, "cpu", dtype, False))
        while True:
            self.set_rng_seed(self.seed)
            try:
                yield next(generator)
            except StopIteration:
                return

    def run_opinfo(self, key):
        op = self.ops[key]
        out = {"opinfo": key, "cases": [], "other": collections.Counter(), "traced": set()}
        supported = op.supported_dtypes("cpu")
        dtypes = [d for d in self.dtypes if d in supported]
        if not dtypes:
            out["other"]["no dtype guardjit has"] += 1
        for n, dtype in enumerate(dtypes):
            dname = str(dtype).replace("torch.", "")
            try:
                attributed = False
                for index, sample in enumerate(self.samples(op, dtype)):
                    if self.max_samples is not None and index >= self.max_samples:
                        break
                    record = dict.fromkeys(CASE_FIELDS)
                    record.update(opinfo=key, dtype=dname, index=index)
                    targets = self.run_sample(op, sample, record)
                    out["traced"].update(targets)
                    if record["target"] is not None:
                        out["cases"].append(record)
                        attributed = attributed or record["skip"] is None
                    else:
                        out["other"][record["skip"]] += 1
                    if (n == 0 and index + 1 == PREFILTER_SAMPLES
                            and not any(map(self.fx.library_has_target, out["traced"]))):
                        out["other"]["first samples reach no registered op"] += 1
                        return self.finish(out)
            except Exception as e:
                out["other"][_bounded(f"samples failed: {type(e).__name__}: {e}", 120)] += 1
            if n == 0 and not attributed:
                break
        return self.finish(out)

    @staticmethod
    def finish(out):
        out["other"] = dict(out["other"])
        out["traced"] = sorted(out["traced"])
        return out


def opinfo_index(op_db):
    """OpInfo key ("name" or "name.variant") -> OpInfo, in op_db order."""
    index = {}
    for op in op_db:
        key = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        while key in index:
            key += "'"
        index[key] = op
    return index


def worker_main():
    """Reads a JSON config line, then OpInfo keys, one a line; writes one
    JSON result line per key."""
    import warnings
    warnings.simplefilter("ignore")
    config = json.loads(sys.stdin.readline())
    worker = _Worker(config["dtypes"], config["max_samples"])
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        key = line.strip()
        if not key:
            continue
        start, cpu = time.perf_counter(), time.process_time()
        result = worker.run_opinfo(key)
        result["seconds"] = round(time.perf_counter() - start, 3)
        result["cpu_seconds"] = round(time.process_time() - cpu, 3)
        print(json.dumps(result), flush=True)


# --------------------------------------------------------------------------
# Driver: a pool of workers, fed one OpInfo at a time.


class _Proc:
    def __init__(self, config):
        self.log = tempfile.TemporaryFile(mode="w+")
        env = dict(os.environ, TORCH_CPP_LOG_LEVEL="ERROR")
        self.popen = subprocess.Popen(
            [sys.executable, "-W", "ignore", os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            bufsize=1, env=env)
        self.popen.stdin.write(json.dumps(config) + "\n")
        self.popen.stdin.flush()
        self.current = None
        self.ready = False

    def send(self, key):
        self.current = key
        self.popen.stdin.write(key + "\n")
        self.popen.stdin.flush()

    def log_tail(self):
        self.log.seek(0)
        lines = [line for line in self.log.read().splitlines() if line.strip()]
        return " | ".join(lines[-3:])

    def close(self):
        try:
            self.popen.stdin.close()
        except OSError:
            pass
        self.popen.wait()
        self.log.close()


def list_opinfos(patterns=None, keys=None):
    """OpInfo keys in op_db order: those matching a pattern (fnmatch), those
    in `keys`, or all."""
    from torch.testing._internal.common_methods_invocations import op_db
    found = list(opinfo_index(op_db))
    if patterns:
        found = [k for k in found if any(fnmatch.fnmatchcase(k, p) for p in patterns)]
    if keys is not None:
        found = [k for k in found if k in set(keys)]
    return found


def run(patterns=None, dtypes=DTYPES, jobs=2, max_samples=None, progress=None, keys=None):
    """Runs the OpInfos whose keys match `patterns` (fnmatch; None = all), or
    only those in `keys`, and returns {"opinfos": {key: result}, "seconds",
    "cpu_seconds", "dtypes", "max_samples", "jobs"}."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        keys = list_opinfos(patterns, keys)
    config = {"dtypes": list(dtypes), "max_samples": max_samples}
    start = time.perf_counter()
    pending = collections.deque(keys)
    results = {}
    selector = selectors.DefaultSelector()
    procs = []

    def start_proc():
        proc = _Proc(config)
        procs.append(proc)
        selector.register(proc.popen.stdout, selectors.EVENT_READ, proc)

    def feed(proc):
        if pending:
            proc.send(pending.popleft())
        else:
            proc.current = None
            selector.unregister(proc.popen.stdout)
            procs.remove(proc)
            proc.close()

    for _ in range(max(1, min(jobs, len(keys)))):
        start_proc()
    while procs:
        for event, _ in selector.select():
            proc = event.data
            line = proc.popen.stdout.readline()
            if not line:  # the worker died
                selector.unregister(proc.popen.stdout)
                procs.remove(proc)
                code = proc.popen.wait()
                tail = proc.log_tail()
                proc.log.close()
                if proc.current is None:
                    raise RuntimeError(f"an OpInfo worker exited ({code}) before taking "
                                       f"work: {tail}")
                reason = _bounded(f"worker died ({code}): {tail}")
                results[proc.current] = {"opinfo": proc.current, "cases": [], "traced": [],
                                         "other": {}, "crash": reason, "seconds": None}
                if progress:
                    progress(results[proc.current])
                if pending:
                    start_proc()
                continue
            message = json.loads(line)
            if message.get("ready"):
                proc.ready = True
            else:
                results[message["opinfo"]] = message
                if progress:
                    progress(message)
            feed(proc)
    return {"opinfos": {k: results[k] for k in keys if k in results},
            "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(sum(r.get("cpu_seconds") or 0 for r in results.values()), 1),
            "dtypes": list(dtypes),
            "max_samples": max_samples, "jobs": jobs}


# --------------------------------------------------------------------------
# Aggregation per overload, the baseline and the table.


def cases(results):
    for result in results["opinfos"].values():
        yield from result["cases"]


def per_overload(results):
    """target -> stats over the samples attributed to it."""
    table = {}
    for case in cases(results):
        row = table.setdefault(case["target"], {
            "opinfos": [], "samples": 0, "run": 0, "skipped": collections.Counter(),
            "eager": collections.Counter(), "jit": collections.Counter(),
            "first": {}, "registered": True, "jit_compiled": 0})
        if case["opinfo"] not in row["opinfos"]:
            row["opinfos"].append(case["opinfo"])
        row["samples"] += 1
        if case["skip"] is not None:
            row["skipped"][case["skip"]] += 1
            if case["skip"] == "not registered":
                row["registered"] = False
            continue
        row["run"] += 1
        row["jit_compiled"] += bool(case.get("jit_compiled"))
        for backend in ("eager", "jit"):
            status, reason = case[backend]
            row[backend][status] += 1
            # The first failure, one not explained by float64 preferred.
            if status != "pass" and (backend not in row["first"] or (
                    row["first"][backend][0] == "wrong64" and status != "wrong64")):
                row["first"][backend] = (status, f"{case['opinfo']} {case['dtype']} "
                                         f"#{case['index']} {case['sample']}: {status}: {reason}")
    return table


def baseline_of(results, rounding_passes=False):
    """{target: {opinfo: {dtype: [run, eager passes, jit passes]}}};
    `rounding_passes`: wrong64 samples (rounding differences) count too."""
    passing = ("pass", "wrong64") if rounding_passes else ("pass",)
    counts = {}
    for case in cases(results):
        if case["skip"] is not None:
            continue
        cell = counts.setdefault(case["target"], {}).setdefault(case["opinfo"], {}) \
            .setdefault(case["dtype"], [0, 0, 0])
        cell[0] += 1
        cell[1] += case["eager"][0] in passing
        cell[2] += case["jit"][0] in passing
    return counts


def environment():
    import torch
    import guardjit
    return {"torch": torch.__version__.split("+")[0], "library": guardjit.library_version()}


def compare_with_baseline(results, baseline):
    """Drops below the baseline: a list of lines, empty when none. Only the
    (OpInfo, dtype) cells `results` ran are compared, so a subset checks.
    A sample that passed in the baseline and is wrong64 now is no drop: its
    values differ from torch's by rounding only, which depends on the BLAS
    kernel the CPU gets (OpenBLAS picks one per processor)."""
    drops = []
    now = baseline_of(results, rounding_passes=True)
    if results["max_samples"] != baseline.get("max_samples"):
        raise ValueError(f"the baseline ran at most {baseline.get('max_samples')} samples per "
                         f"OpInfo and dtype, these results {results['max_samples']}")
    ran = {(key, d) for key, r in results["opinfos"].items() for d in results["dtypes"]
           if "crash" not in r}
    crashed = {key for key, r in results["opinfos"].items() if "crash" in r}
    for target, by_opinfo in sorted(baseline["counts"].items()):
        for key, by_dtype in sorted(by_opinfo.items()):
            if key not in results["opinfos"]:
                continue
            for dtype, (run, eager, jit) in sorted(by_dtype.items()):
                if dtype not in results["dtypes"]:
                    continue
                if key in crashed:
                    if eager or jit:
                        drops.append(f"{target} ({key}, {dtype}): the worker crashed: "
                                     f"{results['opinfos'][key]['crash']}")
                    continue
                if (key, dtype) not in ran:
                    continue
                got = now.get(target, {}).get(key, {}).get(dtype, [0, 0, 0])
                for name, want, have in (("eager", eager, got[1]), ("jit", jit, got[2])):
                    if have < want:
                        drops.append(f"{target} ({key}, {dtype}) {name}: {have} of {got[0]} "
                                     f"samples pass, the baseline has {want} of {run}")
    return drops


def write_baseline(results, path, env=None):
    env = env or environment()
    data = dict(env, command=COMMAND, dtypes=results["dtypes"],
                max_samples=results["max_samples"], counts=baseline_of(results))
    text = json.dumps(data, indent=1, sort_keys=True)
    text = re.sub(r"\[\s+(\d+),\s+(\d+),\s+(\d+)\s+\]", r"[\1, \2, \3]", text)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def load_baseline(path=BASELINE_PATH):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def baseline_opinfos(baseline):
    """The OpInfos the baseline has samples of."""
    return sorted({key for by_opinfo in baseline["counts"].values() for key in by_opinfo})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated OpInfo keys or fnmatch patterns (default all)")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated (default all)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--max-samples", type=int, help="per OpInfo and dtype (default all)")
    parser.add_argument("--write", action="store_true",
                        help=f"write {os.path.relpath(TABLE_PATH)} and the baseline")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a pass count is below the baseline")
    parser.add_argument("--json", help="write every sample's result here")
    parser.add_argument("--results", help="use the results a --json run wrote instead of running")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each OpInfo as it finishes, and its failures")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    sys.path.insert(0, HERE)
    dtypes = [d for d in args.dtypes.split(",") if d]
    unknown = sorted(set(dtypes) - set(DTYPES))
    if unknown:
        parser.error(f"unknown dtypes {unknown}; guardjit's are {list(DTYPES)}")
    if args.write and (args.ops or args.max_samples is not None or tuple(dtypes) != DTYPES
                       or args.check):
        parser.error("--write records the full run: drop --ops, --dtypes, --max-samples "
                     "and --check")

    def progress(result):
        if not args.verbose:
            return
        n = len(result["cases"])
        print(f"{result['opinfo']}: {n} samples, {result['seconds']} s"
              + (f" CRASH {result['crash']}" if "crash" in result else ""), file=sys.stderr)
        for case in result["cases"]:
            for backend in ("eager", "jit"):
                if case[backend] and case[backend][0] != "pass":
                    print(f"  {backend} {case['target']} {case['dtype']} #{case['index']} "
                          f"{case['sample']}: {case[backend][0]}: {case[backend][1]}",
                          file=sys.stderr)

    patterns = [p for p in (args.ops or "").split(",") if p] or None
    if args.results:
        with open(args.results, encoding="utf-8") as f:
            results = json.load(f)
    else:
        results = run(patterns, dtypes, args.jobs, args.max_samples, progress)
    import guardjit_ops
    rows = per_overload(results)
    run_total = sum(r["run"] for r in rows.values() if r["registered"])
    print(f"opinfo: {len(results['opinfos'])} OpInfos, {run_total} samples on "
          f"{sum(r['registered'] for r in rows.values())} registered overloads in "
          f"{results['seconds']} s; eager passes "
          f"{sum(r['eager']['pass'] for r in rows.values())}, JIT passes "
          f"{sum(r['jit']['pass'] for r in rows.values())}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    if args.write:
        env = environment()
        import opinfo_table
        opinfo_table.write_table(results, TABLE_PATH, guardjit_ops.registered_ops(), env)
        write_baseline(results, BASELINE_PATH, env)
        print(f"opinfo: wrote {TABLE_PATH} and {BASELINE_PATH}")
    if args.check:
        drops = compare_with_baseline(results, load_baseline())
        for line in drops:
            print("DROP", line)
        return 1 if drops else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
