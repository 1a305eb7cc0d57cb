"""Core ATen coverage: the overloads the installed torch tags torch.Tag.core
that guardjit registers, from `guardjit ops --json` (the CLI on PATH or
$GUARDJIT_CLI), cross-checked against the loader (a probe graph per
overload through the package). Prints the gap."""
import os
import sys
import unittest

from .util import REPO, torch

# The number of Core ATen overloads guardjit registers; raise it as ops land
# (a drop below it fails). bindings/python/OPINFO.md lists the gap too.
MIN_CORE_OVERLOADS = 170

sys.path.insert(0, os.path.join(REPO, "bindings", "python", "tools"))
try:
    import guardjit_ops
except ImportError:  # pragma: no cover - a checkout without tools/
    guardjit_ops = None


@unittest.skipIf(torch is None, "torch is not installed")
@unittest.skipIf(guardjit_ops is None, "bindings/python/tools is not in GUARDJIT_REPO")
class CoreAtenCoverage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.registry = guardjit_ops.registered_ops()
        if cls.registry is None:
            raise unittest.SkipTest("no guardjit CLI on PATH (or GUARDJIT_CLI)")
        cls.covered, cls.gap = guardjit_ops.core_coverage(set(cls.registry))

    def test_coverage_does_not_drop(self):
        total = len(self.covered) + len(self.gap)
        print(f"\ncore ATen (torch {torch.__version__}): guardjit registers "
              f"{len(self.covered)} of {total}; missing {len(self.gap)}:\n  "
              + "\n  ".join(self.gap), file=sys.stderr)
        self.assertGreater(total, 150, "torch's core tag lists too few overloads to compare")
        self.assertGreaterEqual(
            len(self.covered), MIN_CORE_OVERLOADS,
            f"guardjit registers {len(self.covered)} Core ATen overloads, fewer than "
            f"MIN_CORE_OVERLOADS = {MIN_CORE_OVERLOADS}; missing: {self.gap}")

    def test_cli_list_matches_the_loader(self):
        # Every core overload: the CLI's list and the library's graph loader
        # agree on whether guardjit has it.
        disagree = [name for name in self.covered + self.gap
                    if (name in self.registry) != guardjit_ops.library_has(name)]
        self.assertEqual(disagree, [], "`guardjit ops --json` and Graph.from_text disagree")

    def test_entries_say_what_runs_them(self):
        for target in self.covered:
            entry = self.registry[target]
            self.assertTrue(entry["schema"], target)
            self.assertTrue(entry["reference_kernel"] or entry["extern_step"]
                            or entry["cpu_lowering"], f"{target}: nothing runs it")


if __name__ == "__main__":
    unittest.main()
