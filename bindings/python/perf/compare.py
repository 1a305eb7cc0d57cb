"""guardjit vs torch eager vs torch.compile (Inductor) per call (not a test).

For each model: guardjit.export -> Function (a cached call, torch tensors in,
outputs taken back with torch.from_dlpack), torch.compile(backend="guardjit"),
torch eager under no_grad, and torch.compile (Inductor, CPU) - all on the same
inputs and the same thread count (--threads sets torch.set_num_threads and
the guardjit context's pool). Prints the median time per call of each and
the max relative error of guardjit's output vs eager.

    python perf/compare.py [--threads N] [--min-time S] [--models mlp,attention,...]
"""
import argparse
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
from tests.test_export import MLP, Attention, ConvBN, ConvRelu, Embedding  # noqa: E402


def models():
    return {
        "mlp[64,32]": (MLP, lambda: torch.randn(64, 32)),
        "conv_relu[8,3,32,32]": (ConvRelu, lambda: torch.randn(8, 3, 32, 32)),
        "attention[8,64,32]": (Attention, lambda: torch.randn(8, 64, 32)),
        "embedding[32,16]": (Embedding, lambda: torch.randint(0, 100, (32, 16))),
        "conv_bn_pool[8,3,32,32]": (ConvBN, lambda: torch.randn(8, 3, 32, 32)),
        "resnet18[4,3,64,64]": ("resnet18", lambda: torch.randn(4, 3, 64, 64)),
    }


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
    print(f"threads={args.threads}, torch {torch.__version__}, guardjit {guardjit.library_version()}"
          "; median us per call")
    print(f"{'model':26} {'guardjit':>10} {'gj dynamo':>10} {'eager':>10} {'inductor':>10}"
          f" {'gj/eager':>9} {'rel err':>9}")
    for name, (factory, make_input) in models().items():
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
        x = make_input()
        try:
            graph = guardjit.export(model, (x,), context=context)
        except guardjit.Error as e:
            print(f"{name:26} skipped: {e.message.split(': ')[-1][:70]}")
            continue
        fn = guardjit.Function(graph)
        from_dlpack = torch.from_dlpack
        with torch.no_grad():
            expected = model(x)
            out = from_dlpack(fn(x)[0])
            err = float((out - expected).abs().max() / expected.abs().max())
            t_gj = time_per_call(lambda: from_dlpack(fn(x)[0]), args.min_time)
            t_eager = time_per_call(lambda: model(x), args.min_time)
            torch._dynamo.reset()
            gj_compiled = torch.compile(model, backend="guardjit")
            t_gj_dynamo = time_per_call(lambda: gj_compiled(x), args.min_time)
            torch._dynamo.reset()
            try:
                inductor = torch.compile(model)
                t_inductor = time_per_call(lambda: inductor(x), args.min_time)
            except Exception as e:  # noqa: BLE001 - reported in the table
                print(f"  inductor failed: {type(e).__name__}: {str(e)[:100]}")
                t_inductor = None
        print(f"{name:26} {fmt(t_gj)} {fmt(t_gj_dynamo)} {fmt(t_eager)} {fmt(t_inductor)}"
              f" {t_gj / t_eager:9.2f} {err:9.1e}")


if __name__ == "__main__":
    main()
