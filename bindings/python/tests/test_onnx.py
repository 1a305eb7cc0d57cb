"""Graph.from_onnx: ONNX models through the library's importer (core/onnx/).

The models are encoded here by hand (protobuf wire format), so the test
needs neither the onnx package nor test data files.
"""
import os
import struct
import tempfile
import unittest

import guardjit

from .util import needs_numpy, np


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field, value):
    return _varint(field << 3) + _varint(value)


def _bytes(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _value_info(name, dims):
    dim_msgs = b"".join(_bytes(1, _int(1, d)) for d in dims)  # Dimension.dim_value
    tensor = _int(1, 1) + _bytes(2, dim_msgs)  # elem_type FLOAT, shape
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor))  # name, TypeProto.tensor_type


def _node(op, inputs, outputs, name):
    return (b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
            + _bytes(3, name) + _bytes(4, op))


def relu_add_model(op="Relu"):
    """y = Relu(x + b), x: float32[2, 3], b = [1, -5, 0.5]."""
    bias = (_int(1, 3) + _int(2, 1) + _bytes(8, "b")  # dims, data_type FLOAT, name
            + _bytes(9, struct.pack("<3f", 1.0, -5.0, 0.5)))  # raw_data
    graph = (_bytes(1, _node("Add", ["x", "b"], ["s"], "add"))
             + _bytes(1, _node(op, ["s"], ["y"], "act"))
             + _bytes(2, "relu_add") + _bytes(5, bias)
             + _bytes(11, _value_info("x", [2, 3])) + _bytes(12, _value_info("y", [2, 3])))
    return _int(1, 8) + _bytes(7, graph) + _bytes(8, _int(2, 13))  # ir_version, graph, opset


class FromOnnxTest(unittest.TestCase):
    def test_loads_bytes_and_files_whatever_they_are_called(self):
        model = relu_add_model()
        graph = guardjit.Graph.from_onnx(model)
        self.assertEqual(graph.input_names, ("x",))
        self.assertIn("aten.relu.default", graph.tabular())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.bin")
            with open(path, "wb") as f:
                f.write(model)
            self.assertIn("aten.add.Tensor", guardjit.Graph.from_onnx(path).tabular())

    @needs_numpy
    def test_runs_and_matches_numpy(self):
        fn = guardjit.Function(guardjit.Graph.from_onnx(relu_add_model()))
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        (out,) = fn(x)
        expected = np.maximum(x + np.array([1, -5, 0.5], dtype=np.float32), 0)
        np.testing.assert_allclose(np.from_dlpack(out), expected)

    def test_unmappable_op_is_refused_naming_the_node(self):
        with self.assertRaises(guardjit.UnimplementedError) as cm:
            guardjit.Graph.from_onnx(relu_add_model(op="Frobnicate"))
        self.assertIn("ONNX node 1 'act' (Frobnicate, domain 'ai.onnx', opset 13)",
                      str(cm.exception))

    def test_guardjit_graphs_and_truncated_models_are_invalid(self):
        with self.assertRaises(guardjit.InvalidArgumentError):
            guardjit.Graph.from_onnx(_bytes(1, "graph name") + _bytes(2, _bytes(1, "x")))
        with self.assertRaises(guardjit.InvalidArgumentError) as cm:
            guardjit.Graph.from_onnx(relu_add_model()[:-5])
        self.assertIn("malformed ONNX model", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
