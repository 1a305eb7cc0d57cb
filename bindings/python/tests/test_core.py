"""Context, Graph, Function over the example graphs, with numpy and torch."""
import gc
import os
import sys
import tempfile
import threading
import time
import unittest

import guardjit

from .util import EXAMPLES, needs_numpy, needs_torch, np, torch


def example(name):
    return os.path.join(EXAMPLES, name)


def run_spec(path):
    """Input shapes from the example's '# run: --input x=float32[2,3] ...' line."""
    with open(path) as f:
        for line in f:
            if line.startswith("# run:"):
                shapes = []
                for item in line.split("--input")[1:]:
                    dtype, dims = item.split()[0].split("=", 1)[1].split("[")
                    shapes.append((dtype, tuple(int(d) for d in dims.rstrip("]").split(","))))
                return shapes
    raise AssertionError(f"{path} has no '# run:' line")


@needs_numpy
class ExampleGraphsTest(unittest.TestCase):
    def test_every_example_runs_with_numpy(self):
        names = sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".pbtxt"))
        self.assertGreater(len(names), 5)
        rng = np.random.default_rng(0)
        for name in names:
            with self.subTest(graph=name):
                graph = guardjit.Graph.from_file(example(name))
                fn = guardjit.Function(graph)
                inputs = [rng.standard_normal(shape).astype(dtype)
                          for dtype, shape in run_spec(example(name))]
                outputs = fn(*inputs)
                self.assertEqual(len(outputs), len(graph.output_names))
                again = fn(*inputs)
                for a, b in zip(outputs, again):
                    np.testing.assert_array_equal(np.from_dlpack(a), np.from_dlpack(b))
                # Each graph (more than one where the example breaks)
                # compiles once.
                self.assertEqual(fn.stats.hits, 1)
                self.assertEqual(fn.stats.compiles, fn.stats.graph_count)

    def test_abs_div_values(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("seed_abs_div.pbtxt")))
        a = np.array([1.0, -2.0, 3.5], np.float32)
        b = np.array([2.0, 2.0, 2.0], np.float32)
        div, lt = fn(a, b)
        np.testing.assert_allclose(np.from_dlpack(div), a / (np.abs(a) + 1), rtol=1e-6)
        self.assertEqual(lt.dtype, "bool")
        self.assertFalse(bool(np.from_dlpack(lt)))

    def test_graph_from_text_and_bytes_roundtrip(self):
        with open(example("mlp.pbtxt")) as f:
            text = f.read()
        graph = guardjit.Graph.from_text(text)
        self.assertEqual(graph.input_names, ("x",))
        self.assertEqual(graph.output_names, ("addmm_1",))
        self.assertIn("aten.addmm.default", graph.tabular())
        self.assertEqual(graph.to_text(), text)
        with self.assertRaises(guardjit.InvalidArgumentError) as cm:
            guardjit.Graph.from_bytes(b"\xff\xff not a proto")
        self.assertEqual(cm.exception.code, guardjit.ErrorCode.INVALID_ARGUMENT)


class GraphMetadataTest(unittest.TestCase):
    def test_inputs_and_outputs_declared_in_the_file(self):
        graph = guardjit.Graph.from_text("""
            name: "meta"
            placeholders { name: "x" meta { dtype: FLOAT32 dims { symbol: "batch" }
                                            dims { size: 3 } dims {} } }
            placeholders { name: "y" }
            outputs { ref: "x" }
            outputs { ref: "y" }
            output_meta { dtype: INT64 unknown_rank: true }
            output_meta { dtype: BOOL }
        """)
        self.assertEqual(graph.inputs, (
            guardjit.TensorInfo("x", "float32", ("batch", 3, None)),
            guardjit.TensorInfo("y", None, None)))
        self.assertEqual(graph.outputs, (
            guardjit.TensorInfo("x", "int64", None),
            guardjit.TensorInfo("y", "bool", ())))

    def test_bad_symbol_is_invalid_argument_naming_the_placeholder(self):
        with self.assertRaises(guardjit.InvalidArgumentError) as cm:
            guardjit.Graph.from_text(
                'placeholders { name: "x" meta { dims { symbol: "a-b" } } } outputs { ref: "x" }')
        self.assertIn("placeholder 'x': dim 0: symbol 'a-b'", str(cm.exception))


@needs_numpy
class ZeroCopyTest(unittest.TestCase):
    def setUp(self):
        self.fn = guardjit.Function(guardjit.Graph.from_file(example("mlp.pbtxt")))
        self.x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)

    def test_numpy_output_shares_library_memory(self):
        (out,) = self.fn(self.x)
        array = np.from_dlpack(out)
        self.assertEqual(array.ctypes.data, out.data_ptr)
        self.assertEqual(array.shape, out.shape)
        # The memory outlives the Tensor object, the function and its context.
        ptr = out.data_ptr
        del out
        self.fn = None
        gc.collect()
        self.assertEqual(array.ctypes.data, ptr)
        self.assertTrue(np.isfinite(array).all())

    @needs_torch
    def test_torch_output_shares_library_memory(self):
        (out,) = self.fn(torch.from_numpy(self.x))
        t = torch.from_dlpack(out)
        self.assertEqual(t.data_ptr(), out.data_ptr)
        a = np.from_dlpack(out)  # a second export of the same output
        self.assertEqual(a.ctypes.data, out.data_ptr)
        np.testing.assert_array_equal(t.numpy(), a)

    def test_inputs_are_borrowed_and_released(self):
        before = sys.getrefcount(self.x)
        for _ in range(10):
            self.fn(self.x)
        self.assertEqual(sys.getrefcount(self.x), before)  # capsules consumed
        # A strided view is read in place (the library takes strides).
        wide = np.zeros((4, 16), np.float32)
        wide[:, ::2] = self.x
        (a,) = self.fn(self.x)
        (b,) = self.fn(wide[:, ::2])
        np.testing.assert_allclose(np.from_dlpack(a), np.from_dlpack(b), rtol=1e-6)

    def test_out_writes_in_place(self):
        dest = np.full((4, 4), np.nan, np.float32)
        ptr = dest.ctypes.data
        result = self.fn(self.x, out=[dest])
        self.assertIs(result[0], dest)
        self.assertEqual(dest.ctypes.data, ptr)
        (expected,) = self.fn(self.x)
        np.testing.assert_allclose(dest, np.from_dlpack(expected), rtol=1e-6)

    @needs_torch
    def test_torch_input_requiring_grad_is_refused_by_torch(self):
        p = torch.nn.Parameter(torch.from_numpy(self.x))
        with self.assertRaises(BufferError):
            self.fn(p)
        self.fn(p.detach())


@needs_numpy
class ErrorsTest(unittest.TestCase):
    def test_wrong_shape_is_invalid_argument_with_message(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("mlp.pbtxt")))
        with self.assertRaises(guardjit.InvalidArgumentError) as cm:
            fn(np.ones((4, 9), np.float32))
        e = cm.exception
        self.assertIsInstance(e, guardjit.Error)
        self.assertEqual(e.code, guardjit.ErrorCode.INVALID_ARGUMENT)
        self.assertIn("addmm", e.message)
        self.assertIn("INVALID_ARGUMENT", str(e))

    def test_missing_file_is_not_found(self):
        with self.assertRaises(guardjit.NotFoundError) as cm:
            guardjit.Graph.from_file("/nonexistent/graph.pbtxt")
        self.assertEqual(cm.exception.code, 5)

    def test_unknown_target_is_unimplemented(self):
        text = ('name: "g" placeholders { name: "x" } nodes { name: "n" '
                'target: "aten.no_such_op.default" args { ref: "x" } } outputs { ref: "n" }')
        with self.assertRaises(guardjit.UnimplementedError) as cm:
            guardjit.Graph.from_text(text)
        self.assertIn("aten.no_such_op.default", cm.exception.message)

    def test_non_tensor_and_wrong_count_are_type_errors(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("mlp.pbtxt")))
        with self.assertRaisesRegex(TypeError, "__dlpack__"):
            fn([1.0, 2.0])
        with self.assertRaisesRegex(TypeError, "takes 1 inputs"):
            fn()
        with self.assertRaisesRegex(
                TypeError, r"unexpected keyword 'bogus' \(stream, out, timeout_us, synchronize\)"):
            fn(np.ones((4, 8), np.float32), bogus=1)

    def test_synchronize_is_read_and_ignored_on_cpu(self):
        # guardjit.h: synchronize is "Ignored for CPU calls". The keyword is
        # read as a truth value (a value that has none fails), then the call
        # runs as without it.
        fn = guardjit.Function(guardjit.Graph.from_file(example("seed_mul.pbtxt")))
        x = np.arange(10, dtype=np.float32)
        b = np.full(10, 2, np.float32)
        np.testing.assert_array_equal(np.from_dlpack(fn(x, b, synchronize=True)[0]), 2 * x)
        np.testing.assert_array_equal(np.from_dlpack(fn(x, b, synchronize=0)[0]), 2 * x)

        class NoTruth:
            def __bool__(self):
                raise ValueError("no truth value")

        with self.assertRaisesRegex(ValueError, "no truth value"):
            fn(x, b, synchronize=NoTruth())

    def test_bad_options(self):
        graph = guardjit.Graph.from_file(example("mlp.pbtxt"))
        with self.assertRaises(ValueError):
            guardjit.Function(graph, dynamic="sometimes")
        with self.assertRaises(ValueError):
            guardjit.Function(graph, mark_dynamic=[("nope", 0)])
        with self.assertRaises(ValueError):
            guardjit.Function(graph, mode="max-autotune")
        with self.assertRaises(ValueError):
            guardjit.Function(graph, compile="later")
        # A raw gj_function_mode the library does not know, and a negative
        # graph limit, are the library's to refuse.
        with self.assertRaises(guardjit.InvalidArgumentError):
            guardjit.Function(graph, mode=7)
        with self.assertRaises(guardjit.InvalidArgumentError):
            guardjit.Function(graph, max_graphs_per_entry=-1)


@needs_numpy
class FunctionTest(unittest.TestCase):
    def test_dynamic_and_mark_dynamic(self):
        graph = guardjit.Graph.from_file(example("mlp.pbtxt"))
        fn = guardjit.Function(graph, mark_dynamic=[guardjit.DynamicDim("x", 0, 2, 64)])
        for batch in (2, 4, 8, 64):
            (out,) = fn(np.ones((batch, 8), np.float32))
            self.assertEqual(out.shape, (batch, 4))
        self.assertEqual(fn.stats.compiles, 1)
        fn(np.ones((65, 8), np.float32))  # past max: a new entry
        self.assertEqual(fn.stats.compiles, 2)
        self.assertIn("x.size()[0] <= 64", fn.dump_guards())
        self.assertIn("Cache:", fn.explain())

    def test_static_and_recompile_limit(self):
        graph = guardjit.Graph.from_file(example("mlp.pbtxt"))
        fn = guardjit.Function(graph, dynamic="static", recompile_limit=2)
        for batch in (2, 3, 4, 5):
            fn(np.ones((batch, 8), np.float32))
        stats = fn.stats
        self.assertEqual(stats.compiles, 2)
        self.assertEqual(stats.fallback_calls, 2)

    def test_precompile_makes_first_call_a_hit(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("mlp.pbtxt")))
        x = np.ones((4, 8), np.float32)
        fn.precompile(x)
        fn(x)
        self.assertEqual((fn.stats.compiles, fn.stats.hits), (1, 1))

    def test_eight_threads_call_one_function(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("attention.pbtxt")))
        rng = np.random.default_rng(2)
        inputs = [rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(8)]
        expected = [np.from_dlpack(fn(x)[0]).copy() for x in inputs]
        failures = []

        def worker(i):
            try:
                for _ in range(200):
                    (out,) = fn(inputs[i])
                    np.testing.assert_array_equal(np.from_dlpack(out), expected[i])
            except Exception as e:  # noqa: BLE001 - reported below
                failures.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        self.assertEqual(fn.stats.calls, 8 + 8 * 200)
        self.assertEqual(fn.stats.compiles, 1)

    def test_memory_stats_stable_over_many_calls(self):
        context = guardjit.Context(num_threads=1)
        fn = guardjit.Function(guardjit.Graph.from_file(example("attention.pbtxt"),
                                                        context=context))
        x = np.ones((2, 4, 8), np.float32)
        for _ in range(10):
            fn(x)
        warm = context.memory_stats
        for _ in range(2000):
            (out,) = fn(x)
            del out
        after = context.memory_stats
        self.assertEqual(after.bytes_in_use, warm.bytes_in_use)
        self.assertEqual(after.system_allocations, warm.system_allocations)
        self.assertEqual(after.compiled_modules, warm.compiled_modules)
        self.assertLessEqual(after.peak_bytes_in_use, warm.peak_bytes_in_use)
        kept = fn(x)[0]
        self.assertGreater(context.memory_stats.bytes_in_use, after.bytes_in_use)
        del kept
        context.release_cached_memory()
        self.assertEqual(context.memory_stats.bytes_cached, 0)

    def test_device_memory_stats(self):
        context = guardjit.Context(num_threads=1)
        fn = guardjit.Function(guardjit.Graph.from_file(example("mlp.pbtxt"),
                                                        context=context))
        (out,) = fn(np.ones((16, 8), np.float32))
        host = context.device_memory_stats("cpu")
        self.assertEqual(host, context.memory_stats)
        self.assertGreaterEqual(host.bytes_in_use, 16 * 4 * 4)
        del out
        context.release_cached_device_memory("cpu")
        after = context.device_memory_stats("cpu")
        self.assertEqual((after.bytes_in_use, after.bytes_cached), (0, 0))
        # A CUDA device: its allocator's counters where a driver and device
        # exist, else UNAVAILABLE naming the device.
        try:
            cuda = context.device_memory_stats("cuda:0")
            self.assertEqual(cuda.compiled_modules, 0)
        except guardjit.UnavailableError as e:
            self.assertIn("CUDA device 0", str(e))
        with self.assertRaises(guardjit.InvalidArgumentError) as cm:
            context.device_memory_stats("cuda:-1")
        self.assertIn("device id -1 is negative", str(cm.exception))
        with self.assertRaises(ValueError):
            context.device_memory_stats("tpu")

    def test_save_keeps_text(self):
        graph = guardjit.Graph.from_file(example("seed_mul.pbtxt"))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "g.pbtxt")
            graph.save(path)
            again = guardjit.Graph.from_file(path)
            self.assertEqual(again.input_names, graph.input_names)


@needs_numpy
class GraphBreakTest(unittest.TestCase):
    """examples/seed_graph_break.pbtxt: Dynamo's toy example, a cond over
    `b.sum() < 0`, which breaks the graph."""

    def setUp(self):
        self.graph = guardjit.Graph.from_file(example("seed_graph_break.pbtxt"))
        self.a = np.linspace(-2, 2, 10, dtype=np.float32)

    def check_call(self, fn, b):
        (out,) = fn(self.a, b)
        sign = -1 if b.sum() < 0 else 1
        np.testing.assert_allclose(np.from_dlpack(out),
                                   self.a / (np.abs(self.a) + 1) * (sign * b), rtol=1e-6)

    def test_graph_break_counts_and_explain(self):
        fn = guardjit.Function(self.graph)
        self.check_call(fn, np.full(10, 0.5, np.float32))
        self.assertEqual((fn.stats.graph_count, fn.stats.graph_break_count), (2, 1))
        self.assertIn("Graph Count: 2", fn.explain())
        # The other branch is a third graph, compiled when first reached.
        self.check_call(fn, np.full(10, -0.5, np.float32))
        self.assertEqual(fn.stats.graph_count, 3)

    def test_fullgraph_makes_the_break_an_error(self):
        fn = guardjit.Function(self.graph, fullgraph=True)
        with self.assertRaises(guardjit.UnimplementedError) as cm:
            fn(self.a, np.full(10, 0.5, np.float32))
        self.assertIn("graph break at node 'cond'", cm.exception.message)

    def test_reduce_overhead_is_ignored_on_cpu(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("seed_mul.pbtxt")),
                               mode="reduce-overhead", max_graphs_per_entry=2)
        x, b = np.ones(6, np.float32), np.full(6, 2, np.float32)
        for _ in range(3):
            (out,) = fn(x, b)
        np.testing.assert_array_equal(np.from_dlpack(out), x * b)
        stats = fn.stats
        self.assertEqual((stats.calls, stats.hits, stats.graph_count), (3, 2, 1))
        self.assertEqual((stats.cuda_graphs_recorded, stats.cuda_graph_replays), (0, 0))


@needs_numpy
class AsyncCompileTest(unittest.TestCase):
    def test_answers_every_call_then_serves_the_entry(self):
        fn = guardjit.Function(guardjit.Graph.from_file(example("seed_mul.pbtxt")),
                               compile="async")
        x, b = np.arange(3, dtype=np.float32), np.full(3, 2, np.float32)
        deadline = time.monotonic() + 20
        while True:
            (out,) = fn(x, b)
            np.testing.assert_array_equal(np.from_dlpack(out), x * b)
            if fn.stats.hits:
                self.assertEqual(fn.stats.compiles, 1)
                break
            self.assertLess(time.monotonic(), deadline, f"never hit: {fn.stats}")
            time.sleep(0.005)


class VersionTest(unittest.TestCase):
    def test_versions(self):
        self.assertEqual(guardjit.api_version()[0], 0)
        self.assertGreaterEqual(guardjit.api_version()[1], 8)
        self.assertTrue(guardjit.library_version().startswith("0."))


if __name__ == "__main__":
    unittest.main()
