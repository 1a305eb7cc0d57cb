"""Per-call overhead of the Python binding over the C call (not a test).

Times a cached call of examples/mlp.pbtxt on a [4, 8] float32 input from
Python (fn(x): DLPack import, gj_function_call_alloc, guardjit.Tensor
output, its release) against the same gj_function_call_alloc +
gj_tensor_release loop timed in C inside the extension (Function._time_c_calls),
for numpy and torch inputs; best of several rounds.

    python perf/overhead.py [--calls N] [--rounds R]
"""
import argparse
import os
import time

import numpy as np

import guardjit

REPO = os.environ.get("GUARDJIT_REPO") or os.path.join(os.path.dirname(__file__), "..", "..", "..")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    inputs = {"numpy": np.ones((4, 8), np.float32)}
    try:
        import torch
        inputs["torch"] = torch.ones(4, 8)
    except ImportError:
        pass
    fn = guardjit.Function(guardjit.Graph.from_file(os.path.join(REPO, "examples", "mlp.pbtxt"),
                                                    context=guardjit.Context(num_threads=1)))
    print(f"{'input':8} {'python us':>10} {'C us':>8} {'overhead us':>12}")
    for name, x in inputs.items():
        for _ in range(1000):
            fn(x)
        rows = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(args.calls):
                fn(x)
            py = (time.perf_counter() - start) / args.calls
            c = fn._time_c_calls([x], args.calls)
            rows.append((py, c))
        py = min(r[0] for r in rows)
        c = min(r[1] for r in rows)
        print(f"{name:8} {py * 1e6:10.3f} {c * 1e6:8.3f} {(py - c) * 1e6:12.3f}")


if __name__ == "__main__":
    main()
