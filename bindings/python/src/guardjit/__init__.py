"""guardjit for Python: guard-cached JIT for FX-shaped ATen graphs over its C ABI.

    import guardjit, numpy as np
    fn = guardjit.Function(guardjit.Graph.from_file("examples/mlp.pbtxt"))
    (out,) = fn(np.ones((4, 8), np.float32))      # zero-copy in and out
    print(np.from_dlpack(out), fn.stats)

guardjit.export(module, args) turns a torch module into a Graph
(torch.export + Core ATen), and torch.compile(model, backend="guardjit")
runs Dynamo's graphs through the library.
"""
from ._core import (CompileCacheStats, Context, DynamicDim, Function, FunctionStats, Graph,
                    MemoryStats, Tensor, TensorInfo, default_context)
from ._errors import (AbortedError, AlreadyExistsError, CancelledError, DataLossError,
                      DeadlineExceededError, Error, ErrorCode, FailedPreconditionError,
                      InternalError, InvalidArgumentError, NotFoundError, OutOfRangeError,
                      PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
                      UnavailableError, UnimplementedError, UnknownError)
from ._native import api_version, set_log_topics
from ._native import version as library_version

__version__ = "0.13.0"


def export(module, args, kwargs=None, *, dynamic_shapes=None, strict=False, context=None,
           name=None):
    """torch.export + Core ATen decompositions of `module` as a guardjit Graph.

    See guardjit.exporter.export.
    """
    from .exporter import export as _export
    return _export(module, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                   context=context, name=name)


__all__ = [
    "CompileCacheStats", "Context", "DynamicDim", "Function", "FunctionStats", "Graph",
    "MemoryStats", "Tensor", "TensorInfo",
    "default_context", "export", "api_version", "library_version", "set_log_topics",
    "Error", "ErrorCode", "AbortedError", "AlreadyExistsError", "CancelledError",
    "DataLossError", "DeadlineExceededError", "FailedPreconditionError", "InternalError",
    "InvalidArgumentError", "NotFoundError", "OutOfRangeError", "PermissionDeniedError",
    "ResourceExhaustedError", "UnauthenticatedError", "UnavailableError",
    "UnimplementedError", "UnknownError",
]
