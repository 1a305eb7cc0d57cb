"""One start, timed in a fresh process (models_benchmark.py runs it): what a
new replica pays before its first answer, without the interpreter's and
torch's import time.

    python first_call.py gj GRAPH.pbtxt INPUTS.pt THREADS [CACHE_DIR]
        guardjit.Context(num_threads, cache_dir) + Graph.from_file +
        Function + the first call; CACHE_DIR "" = no compile cache
    python first_call.py ort MODEL.onnx INPUTS.pt THREADS
        ONNX Runtime InferenceSession creation + the first run

Prints the seconds, then for gj the compile cache's counters.
"""
import sys
import time

import torch


def main():
    kind, path, inputs_path, threads = sys.argv[1:5]
    threads = int(threads)
    inputs = torch.load(inputs_path)
    torch.set_num_threads(threads)
    if kind == "gj":
        import guardjit
        cache_dir = sys.argv[5] if len(sys.argv) > 5 else ""
        start = time.perf_counter()
        context = guardjit.Context(num_threads=threads, cache_dir=cache_dir)
        graph = guardjit.Graph.from_file(path, context=context)
        fn = guardjit.Function(graph)
        outs = fn(*inputs)
        elapsed = time.perf_counter() - start
        del outs
        s = context.compile_cache_stats
        print(f"{elapsed:.6f} compiled={s.kernels_compiled} loaded={s.kernels_loaded} "
              f"entries_loaded={fn.stats.entries_loaded}")
    elif kind == "ort":
        import onnxruntime as ort
        feed_values = [t.numpy() for t in inputs]
        start = time.perf_counter()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feed = {i.name: v for i, v in zip(session.get_inputs(), feed_values)}
        session.run(None, feed)
        print(f"{time.perf_counter() - start:.6f}")
    else:
        sys.exit(f"unknown kind {kind!r}: gj or ort")


if __name__ == "__main__":
    main()
