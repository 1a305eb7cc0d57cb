"""torch.compile(model, backend="guardjit") against eager."""
import unittest

from .util import max_rel_error, needs_torch, torch

if torch is not None:
    import torch._dynamo

    import guardjit.dynamo  # registers the backend where no entry point does (a source tree)

    from .test_export import (BERT, GPT, MLP, Attention, ConvRelu, Embedding,
                              assert_one_compiled_dynamic_entry, masked_token_inputs,
                              token_inputs)


@needs_torch
class DynamoBackendTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        torch._dynamo.reset()

    def check(self, model, make_input, sizes, **compile_options):
        model = model.eval()
        compiled = torch.compile(model, backend="guardjit", **compile_options)
        with torch.no_grad():
            for size in sizes:
                x = make_input(size)
                err = max_rel_error(compiled(x).numpy(), model(x).numpy())
                self.assertLessEqual(err, 1e-4, f"input size {size}")

    def test_backend_is_registered(self):
        self.assertIn("guardjit", torch._dynamo.list_backends())
        from importlib.metadata import entry_points
        installed = [e.value for e in entry_points(group="torch_dynamo_backends")
                     if e.name == "guardjit"]
        if installed:  # pip-installed: torch finds it without an import
            self.assertEqual(installed, ["guardjit.dynamo:guardjit_backend"])

    def test_mlp(self):
        self.check(MLP(), lambda b: torch.randn(b, 32), (4, 4, 8))

    def test_conv_relu(self):
        self.check(ConvRelu(), lambda b: torch.randn(b, 3, 16, 16), (2,))

    def test_attention_dynamic(self):
        self.check(Attention(), lambda b: torch.randn(b, 10, 32), (2, 4, 8), dynamic=True)

    def test_embedding(self):
        self.check(Embedding(), lambda b: torch.randint(0, 100, (b, 7)), (4, 5))

    def check_models(self, model, make_inputs, batches=(2, 4, 8), symbols=1):
        """A model of several inputs or outputs, compiled with a dynamic
        batch: Dynamo captures one graph, and its guardjit Function serves
        every batch from one dynamic entry compiled by the CPU JIT."""
        model = model.eval()
        functions = []
        compile_forward = guardjit.dynamo._compile_forward

        def recording(fx_graph, example_inputs):
            run = compile_forward(fx_graph, example_inputs)
            functions.append(run.guardjit_function)
            return run

        guardjit.dynamo._compile_forward = recording
        try:
            compiled = torch.compile(model, backend="guardjit", dynamic=True)
            with torch.no_grad():
                for b in batches:
                    inputs = make_inputs(b)
                    outs, expected = compiled(*inputs), model(*inputs)
                    if not isinstance(expected, tuple):
                        outs, expected = (outs,), (expected,)
                    for out, exp in zip(outs, expected):
                        err = max_rel_error(out.numpy(), exp.numpy())
                        self.assertLessEqual(err, 1e-4, f"batch {b}: {err:.3g}")
        finally:
            guardjit.dynamo._compile_forward = compile_forward
        self.assertEqual(len(functions), 1, "Dynamo captured more than one graph")
        assert_one_compiled_dynamic_entry(self, functions[0], symbols)

    def test_gpt_causal_sdpa(self):
        self.check_models(GPT(), token_inputs)

    def test_bert_padding_mask(self):
        # Dynamo gives ids and mask one batch symbol (its graph's SymInt
        # input), which guardjit reads from ids, guarding mask's equal.
        self.check_models(BERT(), masked_token_inputs)

    def check_torchvision(self, factory):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        model = getattr(torchvision.models, factory)(weights=None)
        self.check_models(model, lambda b: (torch.randn(b, 3, 64, 64),))

    def test_resnet18(self):
        self.check_torchvision("resnet18")

    def test_mobilenet_v2(self):
        self.check_torchvision("mobilenet_v2")

    def test_with_grad_enabled_outputs_match(self):
        model = MLP().eval()
        compiled = torch.compile(model, backend="guardjit")
        x = torch.randn(3, 32)
        out = compiled(x)
        self.assertLessEqual(max_rel_error(out.detach().numpy(), model(x).detach().numpy()), 1e-4)


if __name__ == "__main__":
    unittest.main()
