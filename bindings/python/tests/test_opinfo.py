"""PyTorch's OpInfo sample inputs through guardjit (bindings/python/tools/opinfo.py),
held to the pass counts committed with bindings/python/OPINFO.md
(tools/opinfo_baseline.json): a pass count below the baseline fails,
counting as passes the samples whose values differ from torch's by
rounding only (wrong64: as close to torch's op in float64 as torch's own
kernel is), which depends on the BLAS kernel a processor gets.

The run here takes the OpInfos the baseline has samples of and the dtypes
in TEST_DTYPES (every sample of those) to stay within CI's time;
`python bindings/python/tools/opinfo.py --check` runs everything.
Needs torch, expecttest and hypothesis (torch's op_db imports them).
"""
import copy
import importlib.util
import os
import sys
import unittest

from .util import REPO

TOOLS = os.path.join(REPO, "bindings", "python", "tools")
# The dtypes this test runs (each is compared with the baseline's counts
# for the same OpInfo and dtype, so any subset is a fair comparison).
TEST_DTYPES = ("float32", "int64", "bool")
JOBS = 2

_missing = [m for m in ("torch", "expecttest", "hypothesis")
            if importlib.util.find_spec(m) is None]
opinfo = None
if os.path.isfile(os.path.join(TOOLS, "opinfo.py")):  # stdlib-only at import
    sys.path.insert(0, TOOLS)
    import opinfo


@unittest.skipIf(_missing, f"not importable: {', '.join(_missing)}")
@unittest.skipIf(opinfo is None, f"no {TOOLS}/opinfo.py (set GUARDJIT_REPO)")
class OpInfoRegression(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.baseline = opinfo.load_baseline()
        env = opinfo.environment()
        if env["torch"] != cls.baseline["torch"]:
            raise unittest.SkipTest(f"the baseline is from torch {cls.baseline['torch']}, "
                                    f"this is torch {env['torch']}: samples differ")

    def test_pass_counts_do_not_drop(self):
        results = opinfo.run(None, TEST_DTYPES, jobs=JOBS,
                             keys=opinfo.baseline_opinfos(self.baseline))
        rows = opinfo.per_overload(results)
        ran = sum(r["run"] for r in rows.values() if r["registered"])
        passed = sum(r["eager"]["pass"] for r in rows.values())
        print(f"\nopinfo: {len(results['opinfos'])} OpInfos, {ran} samples "
              f"({', '.join(TEST_DTYPES)}), eager passes {passed}, JIT passes "
              f"{sum(r['jit']['pass'] for r in rows.values())}, {results['seconds']} s",
              file=sys.stderr)
        want = sum(cell[0] for by_opinfo in self.baseline["counts"].values()
                   for by_dtype in by_opinfo.values()
                   for dtype, cell in by_dtype.items() if dtype in TEST_DTYPES)
        self.assertGreater(want, 0, "the baseline has no samples of TEST_DTYPES")
        drops = opinfo.compare_with_baseline(results, self.baseline)
        self.assertEqual(drops, [], "pass counts below bindings/python/OPINFO.md's "
                         "(regenerate with `" + opinfo.COMMAND + "` if intended)")


@unittest.skipIf(opinfo is None, f"no {TOOLS}/opinfo.py")
class BaselineComparison(unittest.TestCase):
    """The comparison itself flags drops (synthetic results, no torch run)."""

    def results(self, eager, jit):
        case = dict(opinfo="add", dtype="float32", index=0, target="aten.add.Tensor",
                    skip=None, sample="(float32[5])", eager=[eager, None], jit=[jit, None])
        return {"opinfos": {"add": {"opinfo": "add", "cases": [case, copy.deepcopy(case)],
                                    "other": {}, "traced": []}},
                "dtypes": ["float32"], "max_samples": None}

    def test_equal_counts_pass_and_fewer_fail(self):
        baseline = {"max_samples": None, "counts": opinfo.baseline_of(self.results("pass", "pass"))}
        self.assertEqual(baseline["counts"], {"aten.add.Tensor": {"add": {"float32": [2, 2, 2]}}})
        self.assertEqual(opinfo.compare_with_baseline(self.results("pass", "pass"), baseline), [])
        drops = opinfo.compare_with_baseline(self.results("pass", "wrong"), baseline)
        self.assertEqual(len(drops), 1)
        self.assertIn("aten.add.Tensor (add, float32) jit: 0 of 2", drops[0])

    def test_a_crash_is_a_drop_and_other_dtypes_are_not_compared(self):
        baseline = {"max_samples": None, "counts": {"aten.add.Tensor": {"add": {
            "float32": [2, 2, 2], "int64": [3, 3, 3]}}}}
        crashed = self.results("pass", "pass")
        crashed["opinfos"]["add"].update(cases=[], crash="worker died (-11)")
        self.assertEqual(len(opinfo.compare_with_baseline(crashed, baseline)), 1)
        self.assertEqual(opinfo.compare_with_baseline(self.results("pass", "pass"), baseline), [])


if __name__ == "__main__":
    unittest.main()
