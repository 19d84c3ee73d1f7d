"""The tensor model (spec section 1): data types, DMLCalcBufferTensorSize, description rules."""

import numpy as np
import pytest

from dmlwgsl.tensor import (
    DataType,
    DmlValidationError,
    TensorDesc,
    calc_buffer_tensor_size,
    desc_for_array,
    packed_strides,
)


def test_data_type_values_and_sizes():
    want = {
        "FLOAT32": (1, 4),
        "FLOAT16": (2, 2),
        "UINT32": (3, 4),
        "UINT16": (4, 2),
        "UINT8": (5, 1),
        "INT32": (6, 4),
        "INT16": (7, 2),
        "INT8": (8, 1),
        "FLOAT64": (9, 8),
        "UINT64": (10, 8),
        "INT64": (11, 8),
    }
    for name, (value, size) in want.items():
        dt = DataType[name]
        assert int(dt) == value and dt.size_in_bytes == size
        assert dt.numpy_dtype.itemsize == size
        assert DataType.from_numpy(dt.numpy_dtype) is dt
    assert DataType.UINT4.size_in_bits == 4 and int(DataType.INT4) == 13
    assert DataType.parse("float16") is DataType.FLOAT16 and DataType.parse(np.int8) is DataType.INT8


def test_calc_buffer_tensor_size_matches_spec_formula():
    # spec 1.3: roundup((dot(sizes-1, strides) + 1) * esize, 4); packed = prod(sizes) * esize
    assert calc_buffer_tensor_size(DataType.FLOAT32, (1, 8, 2, 3)) == 192
    assert calc_buffer_tensor_size(DataType.UINT8, (1, 1, 3, 5)) == 16  # 15 bytes -> 16
    assert calc_buffer_tensor_size(DataType.UINT8, (1, 1, 3, 5), (15, 1, 5, 1)) == 16
    assert calc_buffer_tensor_size(DataType.FLOAT16, (2, 3), (0, 1)) == 8  # broadcast: 3 elements -> 6 -> 8
    assert calc_buffer_tensor_size(DataType.INT4, (3,)) == 4  # 12 bits -> 2 bytes -> 4
    assert calc_buffer_tensor_size(DataType.UNKNOWN, (3,)) == 0
    assert TensorDesc(DataType.INT64, (2, 2), (4, 1)).total_tensor_size_in_bytes == 48


def test_packed_strides():
    assert packed_strides((2, 3, 4)) == (12, 4, 1)
    assert TensorDesc(DataType.FLOAT32, (2, 3), (3, 1)).is_packed
    assert not TensorDesc(DataType.FLOAT32, (2, 3), (1, 2)).is_packed


@pytest.mark.parametrize(
    "desc,message",
    [
        (TensorDesc(DataType.FLOAT32, (2, 0)), "x.sizes[1]: a size of zero"),
        (TensorDesc(DataType.FLOAT32, (2, 3), (3,)), "x.strides: must have one entry per dimension (2); got 1"),
        (TensorDesc(DataType.FLOAT32, (2, 3), (3, -1)), "x.strides[1]: strides are unsigned"),
        (
            TensorDesc(DataType.FLOAT32, (2, 3), total_tensor_size_in_bytes=20),
            "x.total_tensor_size_in_bytes: must be >= the implied size 24",
        ),
        (
            TensorDesc(DataType.FLOAT32, (2, 3), total_tensor_size_in_bytes=26),
            "x.total_tensor_size_in_bytes: must be a multiple of 4",
        ),
        (TensorDesc(DataType.UINT8, (2**16, 2**16)), "x.sizes: a buffer tensor may hold at most 2^32-1 elements"),
        (
            TensorDesc(DataType.FLOAT32, (2, 3), guaranteed_base_offset_alignment=6),
            "x.guaranteed_base_offset_alignment: must be 0 or a power of two",
        ),
        (TensorDesc(DataType.UNKNOWN, (2, 3)), "x.data_type: UNKNOWN is never valid"),
        (TensorDesc(DataType.FLOAT32, (1,) * 9), "x.sizes: dimension count must be 1 to 8"),
    ],
)
def test_validation_messages(desc, message):
    with pytest.raises(DmlValidationError) as e:
        desc.validate("x")
    assert message in str(e.value)


def test_overlap_detection():
    TensorDesc(DataType.FLOAT32, (2, 3), (3, 1)).check_no_overlap("o")
    TensorDesc(DataType.FLOAT32, (3, 2), (2, 3)).check_no_overlap("o")  # interleaved but unique
    with pytest.raises(DmlValidationError, match="o.strides: two elements of an output may not share an address"):
        TensorDesc(DataType.FLOAT32, (2, 3), (1, 1)).check_no_overlap("o")
    with pytest.raises(DmlValidationError, match="share an address"):
        TensorDesc(DataType.FLOAT32, (2, 3), (0, 1)).check_no_overlap("o")


def test_desc_for_array_keeps_views():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for view, strides in (
        (a, None),
        (a.transpose(0, 2, 1), (20, 1, 5)),
        (a[:, ::2, 1:], (20, 10, 1)),
        (np.broadcast_to(a[:1], (3, 4, 5)), (0, 5, 1)),
    ):
        desc, span = desc_for_array(view)
        assert desc.strides == strides and desc.sizes == view.shape
        got = np.lib.stride_tricks.as_strided(span, view.shape, tuple(t * 4 for t in desc.element_strides))
        np.testing.assert_array_equal(got, view)
    rev = a[:, ::-1]  # negative strides fall back to a packed copy
    desc, span = desc_for_array(rev)
    assert desc.strides is None and np.array_equal(span.reshape(rev.shape), rev)


# ------------------------------------------------------------------------------------------------
# Issue 11: no silent coercion
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,field",
    [
        (dict(sizes=(1, 2.7, 3, 3)), "TensorDesc.sizes[1]"),
        (dict(sizes=(1, 2, 3, 3), strides=(18, 9, 1.5, 1)), "TensorDesc.strides[2]"),
        (dict(sizes=(True, 2)), "TensorDesc.sizes[0]"),
        (dict(sizes=(2, 2), total_tensor_size_in_bytes=16.0), "TensorDesc.total_tensor_size_in_bytes"),
        (dict(sizes=(2, 2), guaranteed_base_offset_alignment=16.0), "TensorDesc.guaranteed_base_offset_alignment"),
        (dict(sizes=3), "TensorDesc.sizes"),
    ],
)
def test_sizes_and_strides_must_be_integers(kwargs, field):
    with pytest.raises(DmlValidationError, match="must be an integer|sequence of integers") as e:
        TensorDesc(DataType.FLOAT32, **kwargs)
    assert str(e.value).startswith(field)


def test_numpy_integers_are_integers():
    d = TensorDesc(DataType.INT8, (np.int64(2), np.uint8(3)), (np.int32(3), 1), np.int16(8))
    assert d.sizes == (2, 3) and type(d.sizes[0]) is int and d.total_tensor_size_in_bytes == 8


@pytest.mark.parametrize("value", ["bfloat16", 99, None, 1.0, True, "float128", object()])
def test_unknown_data_types_name_the_field(value):
    with pytest.raises(DmlValidationError, match=r"^TensorDesc.data_type: unknown data type"):
        TensorDesc(value, (2,))


@pytest.mark.parametrize(
    "value,want",
    [
        ("float16", DataType.FLOAT16),
        ("FLOAT", DataType.FLOAT32),  # ONNX
        ("double", DataType.FLOAT64),  # ONNX
        ("DML_TENSOR_DATA_TYPE_UINT8", DataType.UINT8),
        (np.dtype("<i2"), DataType.INT16),
        ("f4", DataType.FLOAT32),
        (np.uint64, DataType.UINT64),
        (6, DataType.INT32),  # DML's number
    ],
)
def test_data_type_names(value, want):
    assert DataType.parse(value) is want and TensorDesc(value, (2,)).data_type is want


def test_size_one_axes_keep_any_stride():
    """``x[:1][::-1]`` keeps numpy's stride -384 on its size-1 axis: no copy, described as packed."""
    x = np.arange(2 * 3 * 4 * 8, dtype=np.float32).reshape(2, 3, 4, 8)
    v = x[:1][::-1]
    assert v.strides[0] < 0
    desc, span = desc_for_array(v)
    assert desc.sizes == (1, 3, 4, 8) and desc.strides is None
    assert np.shares_memory(span, x)
    np.testing.assert_array_equal(span.reshape(v.shape), v)
    w = x[:, :, ::-1][:1, :1]  # negative stride on a size-4 axis: a packed copy
    desc, span = desc_for_array(w)
    np.testing.assert_array_equal(span.reshape(w.shape), w)
