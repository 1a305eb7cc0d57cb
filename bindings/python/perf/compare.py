"""guardjit vs torch eager vs torch.compile (Inductor) per call (not a test).

For each model: guardjit.export -> Function (a cached call, torch tensors in,
outputs taken back with torch.from_dlpack) of a static export, the same of an
export with a dynamic batch (the entry compiled at batch 2, then called at
the table's batch: one dynamic entry), torch.compile(backend="guardjit"),
torch eager under no_grad, and torch.compile (Inductor, CPU) - all on the
same inputs and the same thread count (--threads sets torch.set_num_threads
and the guardjit context's pool). Prints the median time per call of each
and the max relative error of guardjit's outputs vs eager.

    python perf/compare.py [--threads N] [--min-time S] [--models mlp,attention,...]
"""
import argparse
import inspect
import os
import statistics
import sys
import time
import warnings

import numpy as np
import torch

import guardjit
import guardjit.dynamo  # noqa: F401 - backend="guardjit"

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tests.test_export import (BERT, GPT, MLP, Attention, ConvBN, ConvRelu,  # noqa: E402
                               Embedding, masked_token_inputs, token_inputs)


def models():
    """name -> (factory or torchvision name, inputs at batch b, table batch)."""
    def one(make):
        return lambda b: (make(b),)
    return {
        "mlp[64,32]": (MLP, one(lambda b: torch.randn(b, 32)), 64),
        "conv_relu[8,3,32,32]": (ConvRelu, one(lambda b: torch.randn(b, 3, 32, 32)), 8),
        "attention[8,64,32]": (Attention, one(lambda b: torch.randn(b, 64, 32)), 8),
        "embedding[32,16]": (Embedding, one(lambda b: torch.randint(0, 100, (b, 16))), 32),
        "conv_bn_pool[8,3,32,32]": (ConvBN, one(lambda b: torch.randn(b, 3, 32, 32)), 8),
        "resnet18[8,3,64,64]": ("resnet18", one(lambda b: torch.randn(b, 3, 64, 64)), 8),
        "mobilenet_v2[8,3,64,64]": ("mobilenet_v2", one(lambda b: torch.randn(b, 3, 64, 64)), 8),
        "gpt[8,16]": (GPT, token_inputs, 8),
        "bert[8,16]": (BERT, masked_token_inputs, 8),
    }


def max_rel_error(outs, expected):
    expected = expected if isinstance(expected, tuple) else (expected,)
    return max(float((o - e).abs().max() / e.abs().max()) for o, e in zip(outs, expected))


def time_per_call(fn, min_time):
    for _ in range(3):
        fn()
    samples = []
    deadline = time.perf_counter() + min_time
    while time.perf_counter() < deadline or len(samples) < 10:
        start = time.perf_counter()
        n = 0
        while n < 10:
            fn()
            n += 1
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples)


def fmt(seconds):
    return "-" if seconds is None else f"{seconds * 1e6:10.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--models", default="")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    context = guardjit.Context(num_threads=args.threads)
    wanted = set(filter(None, args.models.split(",")))
    # The machine's load: the table means little where other work competes.
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"threads={args.threads}, torch {torch.__version__}, guardjit {guardjit.library_version()}"
          f", {os.cpu_count()} cpus, load average {load}; median us per call")
    print(f"{'model':26} {'guardjit':>10} {'gj dynamic':>10} {'gj dynamo':>10} {'eager':>10}"
          f" {'inductor':>10} {'gj/eager':>9} {'dyn/eager':>9} {'rel err':>9}")
    for name, (factory, make_inputs, batch) in models().items():
        if wanted and name.split("[")[0] not in wanted:
            continue
        torch.manual_seed(0)
        if isinstance(factory, str):
            try:
                import torchvision
            except ImportError:
                print(f"{name:26} skipped: torchvision is not installed")
                continue
            model = getattr(torchvision.models, factory)(weights=None).eval()
        else:
            model = factory().eval()
        inputs = make_inputs(batch)
        names = list(inspect.signature(model.forward).parameters)[:len(inputs)]
        try:
            graph = guardjit.export(model, inputs, context=context)
            dim = torch.export.Dim("batch", min=2, max=max(16, batch))
            dynamic_graph = guardjit.export(model, make_inputs(2), context=context,
                                            dynamic_shapes={n: {0: dim} for n in names})
        except guardjit.Error as e:
            print(f"{name:26} skipped: {e.message.split(': ')[-1][:70]}")
            continue
        fn = guardjit.Function(graph)
        dynamic = guardjit.Function(dynamic_graph)
        from_dlpack = torch.from_dlpack
        with torch.no_grad():
            expected = model(*inputs)
            dynamic(*make_inputs(2))  # the entry is compiled at batch 2
            err = max(max_rel_error([from_dlpack(o) for o in f(*inputs)], expected)
                      for f in (fn, dynamic))
            t_gj = time_per_call(lambda: [from_dlpack(o) for o in fn(*inputs)], args.min_time)
            t_dyn = time_per_call(lambda: [from_dlpack(o) for o in dynamic(*inputs)],
                                  args.min_time)
            if dynamic.stats.compiles != 1:
                print(f"  {name}: the dynamic export compiled {dynamic.stats.compiles} entries")
            if "eager plan" in dynamic.explain():
                print(f"  {name}: the dynamic entry runs the eager plan, not the JIT")
            t_eager = time_per_call(lambda: model(*inputs), args.min_time)
            torch._dynamo.reset()
            gj_compiled = torch.compile(model, backend="guardjit")
            t_gj_dynamo = time_per_call(lambda: gj_compiled(*inputs), args.min_time)
            torch._dynamo.reset()
            try:
                inductor = torch.compile(model)
                t_inductor = time_per_call(lambda: inductor(*inputs), args.min_time)
            except Exception as e:  # noqa: BLE001 - reported in the table
                print(f"  inductor failed: {type(e).__name__}: {str(e)[:100]}")
                t_inductor = None
        print(f"{name:26} {fmt(t_gj)} {fmt(t_dyn)} {fmt(t_gj_dynamo)} {fmt(t_eager)}"
              f" {fmt(t_inductor)} {t_gj / t_eager:9.2f} {t_dyn / t_eager:9.2f} {err:9.1e}")
    print("load average at the end: " + ", ".join(f"{v:.1f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
