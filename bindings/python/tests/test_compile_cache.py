"""The compile cache through the package (C API 0.11): Context(cache_dir=...,
cache_key=...), Context.compile_cache_stats, FunctionStats.entries_loaded."""
import os
import subprocess
import sys
import tempfile
import unittest

import guardjit

from .util import EXAMPLES, needs_numpy, np


# attention() in another process: GJ_CACHE_DIR and GJ_CACHE_KEY from the
# environment, the output saved to argv[2].
_CHILD = """
import os, sys
import numpy as np
import guardjit
graph = guardjit.Graph.from_file(os.path.join(sys.argv[1], "attention.pbtxt"),
                                 context=guardjit.Context(cache_key="k"))
fn = guardjit.Function(graph)
x = (np.arange(64, dtype=np.float32).reshape(2, 4, 8) % 17) * 0.01 - 0.05
(out,) = fn(x)
assert fn.stats.entries_loaded == 1, fn.explain()
np.save(sys.argv[2], np.from_dlpack(out))
"""


def attention(context):
    graph = guardjit.Graph.from_file(os.path.join(EXAMPLES, "attention.pbtxt"),
                                     context=context)
    fn = guardjit.Function(graph)
    x = (np.arange(64, dtype=np.float32).reshape(2, 4, 8) % 17) * 0.01 - 0.05
    (out,) = fn(x)
    return np.from_dlpack(out).copy(), fn


@needs_numpy
class CompileCacheTest(unittest.TestCase):
    def test_a_second_context_loads_what_the_first_compiled(self):
        with tempfile.TemporaryDirectory() as tmp:
            first = guardjit.Context(cache_dir=tmp)
            want, fn = attention(first)
            stats = first.compile_cache_stats
            self.assertGreater(stats.kernels_compiled, 0)
            self.assertEqual(stats.disk_stores, stats.kernels_compiled)
            self.assertEqual(fn.stats.entries_loaded, 0)

            second = guardjit.Context(cache_dir=tmp)
            got, fn = attention(second)
            stats = second.compile_cache_stats
            self.assertEqual(stats.kernels_compiled, 0)
            self.assertGreater(stats.kernels_loaded, 0)
            self.assertEqual(fn.stats.entries_loaded, 1)
            self.assertIn("loaded from the disk cache", fn.explain())
            np.testing.assert_array_equal(got, want)

    def test_another_process_compiles_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            want, _ = attention(guardjit.Context(cache_dir=tmp, cache_key="k"))
            child = subprocess.run(
                [sys.executable, "-c", _CHILD, EXAMPLES, os.path.join(tmp, "out.npy")],
                env={**os.environ, "GJ_CACHE_DIR": tmp, "GJ_ASSERT_NO_COMPILE": "1"},
                capture_output=True, text=True)
            self.assertEqual(child.returncode, 0, child.stderr)
            np.testing.assert_array_equal(np.load(os.path.join(tmp, "out.npy")), want)

    def test_wrong_key_is_refused_and_empty_dir_disables(self):
        with tempfile.TemporaryDirectory() as tmp:
            attention(guardjit.Context(cache_dir=tmp, cache_key="alpha"))
            other = guardjit.Context(cache_dir=tmp, cache_key="beta")
            attention(other)
            self.assertGreater(other.compile_cache_stats.rejected, 0)
            self.assertEqual(other.compile_cache_stats.kernels_loaded, 0)
            off = guardjit.Context(cache_dir="")
            attention(off)
            self.assertEqual(off.compile_cache_stats.disk_misses, 0)

    def test_bad_cache_dir_names_it(self):
        with tempfile.NamedTemporaryFile() as f:
            with self.assertRaises(guardjit.UnavailableError) as cm:
                guardjit.Context(cache_dir=os.path.join(f.name, "sub"))
            self.assertIn("cache_dir", str(cm.exception))
        with self.assertRaises(guardjit.InvalidArgumentError):
            guardjit.Context(max_cache_bytes=-5)


if __name__ == "__main__":
    unittest.main()
