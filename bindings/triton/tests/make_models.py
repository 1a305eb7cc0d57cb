"""Exports the models the Triton test serves with guardjit.export (run by
the Python binding's venv, which has torch): a two-layer MLP with a dynamic
batch dim, its weights beside it (external data), and the weights as .npy so
the test computes the expected values with numpy.

    make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import torch

import guardjit


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(32, 64), torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main(out):
    torch.manual_seed(0)
    model = MLP().eval()
    batch = torch.export.Dim("batch", min=2, max=1024)
    graph = guardjit.export(model, (torch.randn(4, 32),), dynamic_shapes={"x": {0: batch}})
    os.makedirs(out, exist_ok=True)
    graph.save(os.path.join(out, "model.pbtxt"), external_threshold=1024)
    for name, p in model.state_dict().items():
        np.save(os.path.join(out, name.replace(".", "_") + ".npy"), p.numpy())
    print("make_models: exported", graph.inputs, graph.outputs)


if __name__ == "__main__":
    main(sys.argv[1])
