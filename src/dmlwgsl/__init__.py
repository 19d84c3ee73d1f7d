"""dmlwgsl: DirectML's operators as hand-written WGSL compute shaders, run through wgpu.

Two API levels:

* numpy one-liners, e.g. ``dmlwgsl.depth_to_space(x, 2, order="CRD")``, running on the default
  device (``DMLWGSL_BACKEND`` / ``DMLWGSL_ADAPTER`` choose it);
* the DML-shaped path: describe tensors with :class:`TensorDesc`, build an op description
  (e.g. :class:`DepthToSpaceDesc`), ``compile_*`` it once, then call it on :class:`GpuTensor`
  objects as often as needed, optionally inside ``device.batch()`` for one submission.
"""
from .ops.depth_to_space import (DepthSpaceOrder, DepthToSpaceDesc, compile_depth_to_space,
                                 depth_to_space)
from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth, space_to_depth
from .runtime import Device, GpuError, GpuTensor, Kernel, default_device, set_default_device
from .tensor import DataType, DmlValidationError, TensorDesc, calc_buffer_tensor_size

__version__ = "0.1.0"

__all__ = [
    "DataType", "TensorDesc", "DmlValidationError", "calc_buffer_tensor_size",
    "Device", "GpuTensor", "GpuError", "Kernel", "default_device", "set_default_device",
    "DepthSpaceOrder", "DepthToSpaceDesc", "compile_depth_to_space", "depth_to_space",
    "SpaceToDepthDesc", "compile_space_to_depth", "space_to_depth",
]
