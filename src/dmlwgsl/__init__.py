"""dmlwgsl: DirectML's operators as hand-written WGSL compute shaders, run through wgpu.

Two API levels:

* numpy one-liners, e.g. ``dmlwgsl.depth_to_space(x, 2, order="CRD")``, running on the default
  device (``DMLWGSL_BACKEND`` / ``DMLWGSL_ADAPTER`` choose it);
* the DML-shaped path: describe tensors with :class:`TensorDesc`, build an op description
  (e.g. :class:`DepthToSpaceDesc`), ``compile_*`` it once, then call it on :class:`GpuTensor`
  objects as often as needed, optionally inside ``device.batch()`` for one submission.
"""

from .ops.convolution_integer import (
    ConvolutionIntegerDesc,
    ConvolutionIntegerOperator,
    compile_convolution_integer,
    convolution_integer,
    convolution_integer_output_sizes,
    dot4_available,
)
from .ops.depth_to_space import DepthSpaceOrder, DepthToSpaceDesc, compile_depth_to_space, depth_to_space
from .ops.resample import (
    AxisDirection,
    InterpolationMode,
    OnnxResizeParams,
    OnnxResizeUnsupported,
    Resample1Desc,
    Resample2Desc,
    Resample3Desc,
    ResampleDesc,
    ResampleOperator,
    compile_resample,
    onnx_resize_to_resample,
    resample,
)
from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth, space_to_depth
from .plan import Capabilities, Plan, PlanError
from .runtime import (
    AllocationError,
    DestroyedBufferError,
    Device,
    DeviceLostError,
    GpuError,
    GpuTensor,
    Kernel,
    NoAdapterError,
    default_device,
    set_default_device,
)
from .tensor import DataType, DmlValidationError, TensorDesc, calc_buffer_tensor_size

__version__ = "0.1.0"

__all__ = [
    "DataType",
    "TensorDesc",
    "DmlValidationError",
    "calc_buffer_tensor_size",
    "Device",
    "GpuTensor",
    "GpuError",
    "NoAdapterError",
    "DeviceLostError",
    "DestroyedBufferError",
    "AllocationError",
    "Kernel",
    "Capabilities",
    "Plan",
    "PlanError",
    "default_device",
    "set_default_device",
    "DepthSpaceOrder",
    "DepthToSpaceDesc",
    "compile_depth_to_space",
    "depth_to_space",
    "SpaceToDepthDesc",
    "compile_space_to_depth",
    "space_to_depth",
    "ConvolutionIntegerDesc",
    "ConvolutionIntegerOperator",
    "compile_convolution_integer",
    "convolution_integer",
    "convolution_integer_output_sizes",
    "dot4_available",
    "InterpolationMode",
    "AxisDirection",
    "ResampleDesc",
    "Resample1Desc",
    "Resample2Desc",
    "Resample3Desc",
    "ResampleOperator",
    "compile_resample",
    "resample",
    "onnx_resize_to_resample",
    "OnnxResizeParams",
    "OnnxResizeUnsupported",
]
