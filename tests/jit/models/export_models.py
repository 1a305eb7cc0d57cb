"""Writes the graphs in this folder: small models of the kinds issue #16
runs (a GPT-2-style decoder, a BERT-style encoder with a padding mask, a
ConvNet with resnet18's and mobilenet_v2's blocks), random weights, exported
by guardjit.export (torch.export + Core ATen) with a dynamic batch, so
dynamic_model_test.cc can compile exactly what torch exports for them in a
dynamic entry without torch.

    python tests/jit/models/export_models.py   # with guardjit and torch importable
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import guardjit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bindings", "python"))
from tests.test_export import BERT, GPT  # noqa: E402


def conv_bn(cin, cout, kernel, stride=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups,
                                   bias=False), nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    """resnet18's block: two 3x3 conv-BN, ReLU, identity residual."""

    def __init__(self, c):
        super().__init__()
        self.a, self.b = conv_bn(c, c, 3), conv_bn(c, c, 3)

    def forward(self, x):
        return F.relu(x + self.b(F.relu(self.a(x))))


class InvertedResidual(nn.Module):
    """mobilenet_v2's block: 1x1 expand, ReLU6, depthwise 3x3, ReLU6, 1x1
    project, residual."""

    def __init__(self, c, expand=4):
        super().__init__()
        h = c * expand
        self.expand, self.dw, self.project = conv_bn(c, h, 1), conv_bn(h, h, 3, groups=h), \
            conv_bn(h, c, 1)

    def forward(self, x):
        y = F.relu6(self.dw(F.relu6(self.expand(x))))
        return x + self.project(y)


class ConvNet(nn.Module):
    """resnet18's stem (7x7/2 conv, BN, ReLU, 3x3/2 max pool), a basic block,
    an inverted residual, adaptive average pooling and a linear head."""

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 7, stride=2)
        self.block, self.inverted = BasicBlock(8), InvertedResidual(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.stem(x)), 3, 2, 1)
        x = self.inverted(self.block(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def main():
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=64)
    models = {
        "gpt_dynamic_batch": (GPT(vocab=32, seq=8, dim=16, heads=2, layers=1),
                              (torch.randint(0, 32, (2, 8)),), ("ids",)),
        "bert_dynamic_batch": (BERT(vocab=32, seq=8, dim=16, heads=2, layers=1),
                               (torch.randint(0, 32, (2, 8)),
                                torch.ones(2, 8, dtype=torch.int64)), ("ids", "mask")),
        "convnet_dynamic_batch": (ConvNet(), (torch.randn(2, 3, 24, 24),), ("x",)),
    }
    for name, (model, args, inputs) in models.items():
        graph = guardjit.export(model.eval(), args, name=name,
                                dynamic_shapes={n: {0: batch} for n in inputs})
        graph.save(os.path.join(HERE, name + ".pbtxt"), external_threshold=256)


if __name__ == "__main__":
    main()
