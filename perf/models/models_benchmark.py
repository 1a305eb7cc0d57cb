"""Real models on the CPU: guardjit against ONNX Runtime, torch eager and
Inductor, in one run (issue #29's measure; not a test).

Each model is exported twice from the same torch module and weights:
guardjit.export (torch.export -> guardjit graph) and torch.onnx.export (for
ONNX Runtime's CPU provider, and for guardjit's ONNX importer). Per model and thread count it times, on the
same inputs:
  guardjit   a cached call of guardjit.Function through the Python package
             (zero-copy DLPack in, outputs taken back with torch.from_dlpack)
  gj_onnx    the same, on a Graph.from_onnx of the very .onnx file ORT
             runs (the library's ONNX importer instead of torch.export)
  ort        InferenceSession.run with intra_op_num_threads = threads
  eager      the module under torch.no_grad with torch.set_num_threads
  inductor   torch.compile (default backend), with --inductor
Steady state: the median of per-call times over batches of calls for at least
--min-time seconds after warm-up. First call: guardjit's Function creation
plus its first call (the compile), and ORT's session creation plus its first
run (each after its own export, timed apart); and starts in fresh processes
(perf/models/first_call.py): guardjit with an empty and with a warm compile
cache (issue #31), ORT's session creation + first run. GFLOP/s from torch's
FlopCounterMode, against the peak measured in the same run (a large
float32 torch.mm on one thread). --load also runs every model beside a busy
loop on every core and reports the slowdown.

    python perf/models/models_benchmark.py [--threads 1,2] [--models a,b]
        [--min-time S] [--load] [--inductor] [--out DIR]

Writes DIR/models.md (the table) and, with matplotlib, DIR/models.png (the
ORT/guardjit ratios). Needs torch, torchvision, onnx and onnxruntime
(perf/models/run.sh installs them into the Python package's venv).
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import guardjit

TOLERANCE = 1e-4


class MLP(nn.Module):
    """An MNIST-sized classifier: 784 -> 512 -> 256 -> 10."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 512), nn.Linear(512, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class ConvBN(nn.Module):
    """A small convnet with batch norm, pooling and a classifier."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.c2, self.b2 = nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64)
        self.c3, self.b3 = nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128)
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2)
        x = F.relu(self.b3(self.c3(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class TextModel(nn.Module):
    """Embedding mean over tokens, then a classifier."""

    def __init__(self, vocab=10000, dim=64):
        super().__init__()
        self.emb, self.fc = nn.Embedding(vocab, dim), nn.Linear(dim, 4)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(dim=1))


class Block(nn.Module):
    """A GPT-2 block: pre-norm causal self-attention and a GELU MLP."""

    def __init__(self, dim, heads, sdpa):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        h = d // self.heads
        q, k, v = (z.view(b, t, self.heads, h).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(d, dim=-1))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            att = (q @ k.transpose(-2, -1)) / h ** 0.5
            y = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, causal blocks,
    final norm, LM head."""

    def __init__(self, sdpa, vocab=1000, seq=64, dim=256, heads=8, layers=4):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, sdpa) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def torchvision_model(name):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None)


# name -> (module factory, inputs)
MODELS = {
    "resnet18": (torchvision_model("resnet18"), lambda: (torch.randn(1, 3, 224, 224),)),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), lambda: (torch.randn(1, 3, 224, 224),)),
    "gpt_matmul": (lambda: GPT(sdpa=False), lambda: (torch.randint(0, 1000, (1, 64)),)),
    "gpt_sdpa": (lambda: GPT(sdpa=True), lambda: (torch.randint(0, 1000, (1, 64)),)),
    "mlp_b8": (MLP, lambda: (torch.randn(8, 784),)),
    "convnet_bn_b8": (ConvBN, lambda: (torch.randn(8, 3, 32, 32),)),
    "text_b8": (TextModel, lambda: (torch.randint(0, 10000, (8, 32)),)),
}


def median_time(fn, min_time):
    """Median seconds per call over batches of calls, after warm-up."""
    for _ in range(3):
        fn()
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    per_batch = max(1, int(0.02 / max(once, 1e-7)))
    samples = []
    deadline = time.perf_counter() + min_time
    while time.perf_counter() < deadline or len(samples) < 7:
        start = time.perf_counter()
        for _ in range(per_batch):
            fn()
        samples.append((time.perf_counter() - start) / per_batch)
    return statistics.median(samples)


def peak_gflops():
    """float32 GFLOP/s of a large torch.mm on one thread: the core's peak."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    seconds = median_time(lambda: torch.mm(a, b), 1.0)
    torch.set_num_threads(threads)
    return 2 * 2048 ** 3 / seconds / 1e9


def flops_of(model, inputs):
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    return counter.get_total_flops()


def rel_error(outs, expected):
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    return max(float((torch.as_tensor(o) - e).abs().max() / e.abs().max().clamp_min(1e-30))
               for o, e in zip(outs, expected))


def busy(stop):
    while not stop.is_set():
        sum(range(1000))


class Load:
    """A busy loop on every core while the block runs."""

    def __enter__(self):
        self.stop = multiprocessing.Event()
        self.procs = [multiprocessing.Process(target=busy, args=(self.stop,), daemon=True)
                      for _ in range(os.cpu_count() or 1)]
        for p in self.procs:
            p.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for p in self.procs:
            p.join()


def measure(name, threads, min_time, inductor, tmp):
    factory, make_inputs = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    inputs = make_inputs()
    torch.set_num_threads(threads)
    row = {"model": name, "threads": threads}
    with torch.no_grad():
        expected = model(*inputs)
        row["gflop"] = flops_of(model, inputs) / 1e9
        row["eager"] = median_time(lambda: model(*inputs), min_time)

        context = guardjit.Context(num_threads=threads)
        start = time.perf_counter()
        graph = guardjit.export(model, inputs, context=context)
        row["gj_export"] = time.perf_counter() - start
        start = time.perf_counter()
        fn = guardjit.Function(graph)
        outs = [torch.from_dlpack(o) for o in fn(*inputs)]
        row["gj_first"] = time.perf_counter() - start
        row["gj_err"] = rel_error(outs, expected)
        row["gj_eager_plan"] = "eager plan" in fn.explain()
        row["guardjit"] = median_time(lambda: [torch.from_dlpack(o) for o in fn(*inputs)],
                                      min_time)

        import onnxruntime as ort
        path = os.path.join(tmp, f"{name}.onnx")
        start = time.perf_counter()
        torch.onnx.export(model, inputs, path, dynamo=False)
        row["ort_export"] = time.perf_counter() - start
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        start = time.perf_counter()
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feed_names = [i.name for i in session.get_inputs()]
        feed = {n: t.numpy() for n, t in zip(feed_names, inputs)}
        ort_outs = session.run(None, feed)
        row["ort_first"] = time.perf_counter() - start
        row["ort_err"] = rel_error([torch.from_numpy(o) for o in ort_outs], expected)
        row["ort"] = median_time(lambda: session.run(None, feed), min_time)

        # guardjit on the very .onnx file ORT runs: Graph.from_onnx (the
        # library's ONNX importer), Function creation and first call timed
        # together as gj_first is.
        start = time.perf_counter()
        onnx_fn = guardjit.Function(guardjit.Graph.from_onnx(path, context=context))
        onnx_outs = [torch.from_dlpack(o) for o in onnx_fn(*inputs)]
        row["gj_onnx_first"] = time.perf_counter() - start
        row["gj_onnx_err"] = rel_error(onnx_outs, expected)
        row["gj_onnx_eager_plan"] = "eager plan" in onnx_fn.explain()
        row["guardjit_onnx"] = median_time(
            lambda: [torch.from_dlpack(o) for o in onnx_fn(*inputs)], min_time)

        # Starts in fresh processes (first_call.py): guardjit cold (an
        # empty compile cache), guardjit warm (the cache the cold start
        # filled), ORT's session + first run. Medians of 3.
        graph_path = os.path.join(tmp, f"{name}.pbtxt")
        inputs_path = os.path.join(tmp, f"{name}.inputs.pt")
        graph.save(graph_path)
        torch.save(inputs, inputs_path)
        cache = tempfile.mkdtemp(dir=tmp)
        cold = [start_time("gj", graph_path, inputs_path, threads, cache, clear=True)
                for _ in range(3)]
        warm = [start_time("gj", graph_path, inputs_path, threads, cache) for _ in range(3)]
        ort_start = [start_time("ort", path, inputs_path, threads) for _ in range(3)]
        row["gj_start_cold"] = statistics.median(cold)
        row["gj_start_warm"] = statistics.median(warm)
        row["ort_start"] = statistics.median(ort_start)

        row["inductor"] = None
        if inductor:
            torch._dynamo.reset()
            try:
                compiled = torch.compile(model)
                row["inductor"] = median_time(lambda: compiled(*inputs), min_time)
            except Exception as e:  # noqa: BLE001 - reported in the table
                print(f"  {name}: inductor failed: {type(e).__name__}: {str(e)[:100]}")
    return row, (fn, session), inputs, model


def start_time(kind, path, inputs_path, threads, cache_dir=None, clear=False):
    """Seconds of one start in a fresh process (first_call.py); `clear`
    empties the compile cache first."""
    import shutil
    import subprocess
    if clear and cache_dir:
        shutil.rmtree(cache_dir, ignore_errors=True)
        os.makedirs(cache_dir)
    args = [sys.executable, os.path.join(os.path.dirname(__file__), "first_call.py"), kind,
            path, inputs_path, str(threads)]
    if kind == "gj":
        args.append(cache_dir or "")
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    if kind == "gj" and not clear and "compiled=0" not in out:
        print(f"  warm start compiled something: {' '.join(out)}")
    return float(out[0])


def fmt_ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--load", action="store_true")
    parser.add_argument("--inductor", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    threads = [int(t) for t in args.threads.split(",")]
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n}; known: {', '.join(MODELS)}")
    peak = peak_gflops()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    header = (f"guardjit {guardjit.library_version()}, torch {torch.__version__}, "
              f"onnxruntime {__import__('onnxruntime').__version__}; {os.cpu_count()} cpus, "
              f"load average {load} at the start; one core's float32 peak (torch.mm "
              f"2048^3, 1 thread): {peak:.1f} GFLOP/s")
    print(header)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for t in threads:
                row, (fn, session), inputs, model = measure(name, t, args.min_time,
                                                            args.inductor, tmp)
                if args.load:
                    with Load(), torch.no_grad():
                        torch.set_num_threads(t)
                        row["guardjit_load"] = median_time(
                            lambda: [torch.from_dlpack(o) for o in fn(*inputs)], args.min_time)
                        feed = {i.name: x.numpy() for i, x in zip(session.get_inputs(), inputs)}
                        row["ort_load"] = median_time(lambda: session.run(None, feed),
                                                      args.min_time)
                        row["eager_load"] = median_time(lambda: model(*inputs), args.min_time)
                rows.append(row)
                print(f"{name:14} t={t} guardjit {fmt_ms(row['guardjit'])} ms, gj onnx "
                      f"{fmt_ms(row['guardjit_onnx'])} ms, ort "
                      f"{fmt_ms(row['ort'])} ms, eager {fmt_ms(row['eager'])} ms, "
                      f"ORT/guardjit {row['ort'] / row['guardjit']:.2f}, "
                      f"{row['gflop'] / row['guardjit']:.1f} GFLOP/s, err {row['gj_err']:.1e}"
                      f", onnx err {row['gj_onnx_err']:.1e}"
                      + (" (EAGER PLAN)" if row["gj_eager_plan"] else "")
                      + (" (ONNX EAGER PLAN)" if row["gj_onnx_eager_plan"] else ""), flush=True)
    write_report(rows, header, peak, args)


def write_report(rows, header, peak, args):
    os.makedirs(args.out, exist_ok=True)
    lines = [header, "",
             "Steady-state median ms per call (lower is better); ORT/gj > 1: guardjit is faster.",
             "First call: guardjit Function + first call; ORT session + first run "
             "(exports timed apart).", "",
             "guardjit: torch.export graph; gj ONNX: Graph.from_onnx of the .onnx file "
             "ORT runs.", "",
             "| model | threads | guardjit | gj ONNX | ORT | eager | Inductor | ORT/gj | "
             "ORT/gj ONNX | gj GFLOP/s (% peak) | ORT % peak | gj first | gj ONNX first | "
             "ORT first | gj err | gj ONNX err | ORT err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g = r["gflop"]
        lines.append(
            f"| {r['model']} | {r['threads']} | {fmt_ms(r['guardjit'])} | "
            f"{fmt_ms(r['guardjit_onnx'])} | {fmt_ms(r['ort'])} | "
            f"{fmt_ms(r['eager'])} | {fmt_ms(r['inductor'])} | {r['ort'] / r['guardjit']:.2f} | "
            f"{r['ort'] / r['guardjit_onnx']:.2f} | "
            f"{g / r['guardjit']:.1f} ({100 * g / r['guardjit'] / (peak * r['threads']):.0f}%) | "
            f"{100 * g / r['ort'] / (peak * r['threads']):.0f}% | {fmt_ms(r['gj_first'])} | "
            f"{fmt_ms(r['gj_onnx_first'])} | {fmt_ms(r['ort_first'])} | {r['gj_err']:.0e} | "
            f"{r['gj_onnx_err']:.0e} | {r['ort_err']:.0e} |")
    ratios = [r["ort"] / r["guardjit"] for r in rows]
    geo = 1.0
    for x in ratios:
        geo *= x
    geo **= 1 / max(len(ratios), 1)
    onnx_geo = 1.0
    for r in rows:
        onnx_geo *= r["ort"] / r["guardjit_onnx"]
    onnx_geo **= 1 / max(len(rows), 1)
    lines += ["", f"Geometric mean of ORT/guardjit: {geo:.2f}; of ORT/guardjit on the same "
              f".onnx: {onnx_geo:.2f}"]
    if any("guardjit_load" in r for r in rows):
        lines += ["", "Beside a busy loop on every core (median ms; slowdown against the "
                  "unloaded run):", "",
                  "| model | threads | guardjit | ORT | eager |", "|---|---|---|---|---|"]
        for r in rows:
            if "guardjit_load" not in r:
                continue
            cells = [f"{fmt_ms(r[k + '_load'])} ({r[k + '_load'] / r[k]:.1f}x)"
                     for k in ("guardjit", "ort", "eager")]
            lines.append(f"| {r['model']} | {r['threads']} | " + " | ".join(cells) + " |")
    if any("gj_start_cold" in r for r in rows):
        lines += ["", "Starts, each in a fresh process (perf/models/first_call.py, median of 3; "
                  "imports not timed): guardjit Context + Graph.from_file + Function + first "
                  "call with an empty compile cache (cold) and with the one the cold start "
                  "filled (warm), against ONNX Runtime's session creation + first run:", "",
                  "| model | threads | gj cold | gj warm | cold/warm | ORT | ORT/gj warm |",
                  "|---|---|---|---|---|---|---|"]
        for r in rows:
            if "gj_start_cold" not in r:
                continue
            lines.append(
                f"| {r['model']} | {r['threads']} | {fmt_ms(r['gj_start_cold'])} | "
                f"{fmt_ms(r['gj_start_warm'])} | "
                f"{r['gj_start_cold'] / r['gj_start_warm']:.1f}x | {fmt_ms(r['ort_start'])} | "
                f"{r['ort_start'] / r['gj_start_warm']:.2f} |")
    bad = [r["model"] for r in rows if r["gj_err"] > TOLERANCE]
    if bad:
        lines += ["", f"guardjit outside {TOLERANCE} relative of eager: {', '.join(bad)}"]
    bad = [r["model"] for r in rows if r["gj_onnx_err"] > TOLERANCE]
    if bad:
        lines += ["", f"guardjit on ONNX outside {TOLERANCE} relative of eager: "
                  f"{', '.join(bad)}"]
    plans = [r["model"] for r in rows if r["gj_onnx_eager_plan"]]
    if plans:
        lines += ["", f"guardjit on ONNX ran an eager plan: {', '.join(plans)}"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "models.md"), "w") as f:
        f.write(text)
    print(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart")
        return
    labels = [f"{r['model']}\n{r['threads']}t" for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.8), 4))
    ax.bar(range(len(rows)), ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("ORT time / guardjit time")
    ax.set_title("guardjit vs ONNX Runtime (CPU), above 1: guardjit faster")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "models.png"), dpi=120)


if __name__ == "__main__":
    main()
