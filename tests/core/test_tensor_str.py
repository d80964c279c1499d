"""Differential tests: jaxgrad._core.tensor_str must print exactly what torch's repr prints."""

from __future__ import annotations

import doctest
import importlib.util
import math
import pathlib
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


def _load_module() -> ModuleType:
    try:
        from jaxgrad._core import tensor_str as _tensor_str

        return _tensor_str
    except Exception:
        path = pathlib.Path(__file__).resolve().parents[2] / "src" / "jaxgrad" / "_tensor_str.py"
        spec = importlib.util.spec_from_file_location("jaxgrad_tensor_str", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module


ts = _load_module()
format_tensor = ts.format_tensor

_DEFAULT_DTYPES = (torch.float32, torch.int64, torch.bool)
_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def _restore_defaults() -> None:
    torch.set_printoptions(profile="default", sci_mode=None)
    ts.set_printoptions(profile="default", sci_mode=None)


@pytest.fixture
def printopts() -> Iterator[Callable[..., None]]:
    """Set the same print options in torch and in jaxgrad; restore the defaults afterwards."""

    def apply(**kwargs: object) -> None:
        torch.set_printoptions(**kwargs)
        ts.set_printoptions(**kwargs)

    _restore_defaults()
    try:
        yield apply
    finally:
        _restore_defaults()


def _ours(t: torch.Tensor, prefix: str = "tensor(", namespace: str = "torch.") -> str:
    data = t.detach()
    if data.dtype == torch.bfloat16:
        data = data.float()
    suffixes: list[str] = []
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return format_tensor(
        data.numpy(),
        dtype_name=str(t.dtype).replace("torch.", namespace),
        is_default_dtype=t.dtype in _DEFAULT_DTYPES,
        suffixes=suffixes,
        prefix=prefix,
    )


def _expected(t: torch.Tensor) -> str:
    return repr(t)


def _check(t: torch.Tensor) -> None:
    # The dtype is named "torch.*" here so that line-wrapping decisions, which depend on the
    # length of the dtype text, are compared byte for byte against torch.
    assert _ours(t) == _expected(t)


def _grad_mul() -> torch.Tensor:
    return torch.tensor([1.5, 2.0], requires_grad=True) * 2


def _cases() -> dict[str, Callable[[], torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    nan, inf = math.nan, math.inf
    return {
        "scalar_float": lambda: torch.tensor(3.0),
        "scalar_frac": lambda: torch.tensor(3.25),
        "scalar_int": lambda: torch.tensor(-7),
        "scalar_bool": lambda: torch.tensor(True),
        "scalar_f64": lambda: torch.tensor(1e-7, dtype=torch.float64),
        "scalar_nan": lambda: torch.tensor(nan),
        "scalar_neg_zero": lambda: torch.tensor(-0.0),
        "scalar_neg_inf": lambda: torch.tensor(-inf),
        "vec_int_floats": lambda: torch.tensor([1.0, 2.0, -3.0]),
        "vec_floats": lambda: torch.tensor([1.5, -2.25, 100.125]),
        "vec_align": lambda: torch.tensor([1.0, 10.5, -100.25, 0.001]),
        "mat": lambda: torch.tensor([[1.0, 2.5], [-3.0, 40.0]]),
        "cube": lambda: torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 7,
        "hyper": lambda: torch.arange(48).reshape(2, 2, 3, 4) - 20,
        "empty": lambda: torch.tensor([]),
        "empty_0x3": lambda: torch.zeros(0, 3),
        "empty_2x0": lambda: torch.zeros(2, 0),
        "empty_int": lambda: torch.zeros(0, dtype=torch.int64),
        "empty_int_2x0": lambda: torch.zeros(2, 0, dtype=torch.int32),
        "empty_bool": lambda: torch.zeros(0, dtype=torch.bool),
        "empty_f64": lambda: torch.zeros(0, 3, dtype=torch.float64),
        "empty_grad": lambda: torch.zeros(0, requires_grad=True),
        "ints_neg": lambda: torch.tensor([-1, 20, -300, 4000]),
        "int8": lambda: torch.tensor([-128, 0, 127], dtype=torch.int8),
        "int16": lambda: torch.tensor([[-5, 6], [7, -8]], dtype=torch.int16),
        "int32": lambda: torch.tensor([1, 2, 3], dtype=torch.int32),
        "uint8": lambda: torch.tensor([0, 7, 255], dtype=torch.uint8),
        "int64_big": lambda: torch.tensor([2**62, -(2**63), 0]),
        "bools": lambda: torch.tensor([True, False, True]),
        "bool_mat": lambda: torch.tensor([[True], [False]]),
        "f64": lambda: torch.tensor([1.0, 2.5], dtype=torch.float64),
        "f64_int": lambda: torch.tensor([1.0, 2.0], dtype=torch.float64),
        "f16": lambda: torch.tensor([0.1, 1.0, 65504.0], dtype=torch.float16),
        "f16_small": lambda: torch.tensor([6e-8, 1.0], dtype=torch.float16),
        "bf16": lambda: torch.tensor([0.1, 3.0, -1e30], dtype=torch.bfloat16),
        "sci_small": lambda: torch.tensor([1e-5, 1.0]),
        "sci_large": lambda: torch.tensor([1e9, 1.0]),
        "sci_ratio": lambda: torch.tensor([0.01, 11.0]),
        "sci_int_mode": lambda: torch.tensor([1e10, 1.0, -3.0]),
        "sci_only_large": lambda: torch.tensor([2e8]),
        "no_sci_ratio_1000": lambda: torch.tensor([0.001, 1.0]),
        "no_sci_ratio_exactly_1000": lambda: torch.tensor([0.125, -125.0]),
        "sci_ratio_just_above_1000": lambda: torch.tensor([0.125, 125.0625]),
        "sci_f64_tiny": lambda: torch.tensor([1e-300, 5e300], dtype=torch.float64),
        "nan_inf": lambda: torch.tensor([nan, inf, -inf, 1.0]),
        "nan_inf_frac": lambda: torch.tensor([nan, inf, -inf, 1.5]),
        "nan_inf_sci": lambda: torch.tensor([nan, -inf, 1e-6, 3.0]),
        "only_nonfinite": lambda: torch.tensor([nan, inf, -inf]),
        "zeros": lambda: torch.zeros(3),
        "neg_zero": lambda: torch.tensor([-0.0, 0.0, 1.0]),
        "neg_zero_frac": lambda: torch.tensor([-0.0, 0.5]),
        "neg_zero_sci": lambda: torch.tensor([-0.0, 1e-8]),
        "long_row": lambda: torch.arange(40, dtype=torch.float32) * 1.5,
        "long_row_int": lambda: torch.arange(100) * 1001,
        "long_rows_3d": lambda: torch.randn(2, 2, 30, generator=g, dtype=torch.float64),
        "summarized_1d": lambda: torch.arange(2000),
        "summarized_1d_float": lambda: torch.linspace(-1, 1, 1500),
        "summarized_2d": lambda: torch.randn(50, 50, generator=g),
        "summarized_3d": lambda: torch.randn(20, 20, 20, generator=g) * 1e5,
        "summarized_hidden_sci": lambda: torch.cat(
            [torch.ones(5), torch.full((1000,), 1e-9), torch.ones(5)]
        ),
        "summarized_narrow": lambda: torch.randn(2000, 2, generator=g),
        "summarized_bool": lambda: torch.rand(40, 40, generator=g) > 0.5,
        "threshold_exact": lambda: torch.ones(1000),
        "threshold_plus_one": lambda: torch.ones(1001),
        "grad_fn": _grad_mul,
        "requires_grad": lambda: torch.tensor([1.5, 2.0], requires_grad=True),
        "requires_grad_scalar": lambda: torch.tensor(1.0, requires_grad=True),
        "grad_fn_f64": lambda: torch.ones(2, 2, dtype=torch.float64, requires_grad=True).sum(0),
        "grad_fn_multiline": lambda: torch.randn(4, 9, generator=g, requires_grad=True) * 3,
        "grad_fn_long_line": lambda: torch.randn(11, dtype=torch.float64, requires_grad=True).exp(),
        "grad_fn_wraps": lambda: (
            (torch.arange(10.0, requires_grad=True) * 1.5).mean(0, keepdim=True)
            + torch.randn(8, generator=g)
        ),
    }


_CASES = _cases()


@pytest.mark.parametrize("name", sorted(_CASES))
def test_matches_torch(name: str, printopts: Callable[..., None]) -> None:
    _check(_CASES[name]())


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"precision": 2}, "vec_floats"),
        ({"precision": 8}, "cube"),
        ({"precision": 0}, "vec_align"),
        ({"threshold": 5}, "long_row_int"),
        ({"threshold": 5, "edgeitems": 1}, "cube"),
        ({"threshold": 5, "edgeitems": 0}, "cube"),
        ({"threshold": 5, "edgeitems": 0}, "long_row"),
        ({"edgeitems": 0}, "vec_floats"),
        ({"linewidth": 20}, "long_row"),
        ({"linewidth": 5}, "mat"),
        ({"linewidth": 40}, "grad_fn_multiline"),
        ({"linewidth": 30}, "grad_fn"),
        ({"sci_mode": True}, "vec_floats"),
        ({"sci_mode": True}, "zeros"),
        ({"sci_mode": True}, "vec_int_floats"),
        ({"sci_mode": False}, "sci_small"),
        ({"sci_mode": False}, "sci_int_mode"),
        ({"profile": "short"}, "summarized_2d"),
        ({"profile": "full"}, "summarized_1d"),
        ({"profile": "full", "precision": 1}, "summarized_narrow"),
    ],
)
def test_printoptions_match_torch(
    options: dict[str, object], name: str, printopts: Callable[..., None]
) -> None:
    tensor = _CASES[name]()
    printopts(**options)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    _check(tensor)


@pytest.mark.parametrize("name", ["f64", "empty_int_2x0", "grad_fn_f64", "long_rows_3d", "bf16"])
def test_jaxgrad_dtype_names(name: str, printopts: Callable[..., None]) -> None:
    t = _CASES[name]()
    assert _ours(t, namespace="jaxgrad.") == repr(t).replace("torch.", "jaxgrad.")


def test_suffix_wrap_depends_on_dtype_name_length(printopts: Callable[..., None]) -> None:
    # 19 + len("dtype=torch.float64") + 2 == 40 fits; the 2-char longer jaxgrad name wraps.
    t = torch.tensor(1.1921e-07, dtype=torch.float64)
    printopts(linewidth=40)
    assert _ours(t) == repr(t) == "tensor(1.1921e-07, dtype=torch.float64)"
    assert _ours(t, namespace="jaxgrad.") == "tensor(1.1921e-07,\n       dtype=jaxgrad.float64)"


def test_set_printoptions_semantics(printopts: Callable[..., None]) -> None:
    assert ts.get_printoptions() == _DEFAULTS
    ts.set_printoptions(precision=2, sci_mode=True)
    assert ts.PRINT_OPTS.precision == 2 and ts.PRINT_OPTS.sci_mode is True
    ts.set_printoptions(linewidth=50)  # like torch, sci_mode is reset when not given
    assert ts.PRINT_OPTS.sci_mode is None and ts.PRINT_OPTS.precision == 2
    ts.set_printoptions(profile="full")
    assert ts.PRINT_OPTS.threshold == math.inf and ts.PRINT_OPTS.precision == 4
    with ts.printoptions(precision=1):
        assert ts.PRINT_OPTS.precision == 1
    assert ts.PRINT_OPTS.precision == 4 and ts.PRINT_OPTS.threshold == math.inf
    ts.set_printoptions(profile="default")
    assert ts.get_printoptions() == _DEFAULTS


def test_docstring_examples(printopts: Callable[..., None]) -> None:
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(ts, globs={"format_tensor": format_tensor, **vars(ts)})
    examples = sum(len(t.examples) for t in tests)
    assert examples >= 6
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_parameter_prefix(printopts: Callable[..., None]) -> None:
    for data in (torch.tensor([1.0, 2.0]), torch.randn(5, 12, dtype=torch.float64)):
        param = torch.nn.Parameter(data)
        ours = _ours(param, prefix="Parameter containing:\ntensor(")
        assert ours == _expected(param)


def test_device_suffix_order() -> None:
    got = format_tensor(
        np.array([1.0, 2.0]),
        dtype_name="jaxgrad.float64",
        is_default_dtype=False,
        suffixes=["requires_grad=True"],
        device_suffix="device='cuda:0'",
    )
    assert got == "tensor([1., 2.], device='cuda:0', dtype=jaxgrad.float64, requires_grad=True)"
    empty = format_tensor(
        np.zeros((0, 2), dtype=np.float32),
        dtype_name="jaxgrad.float32",
        is_default_dtype=True,
        device_suffix="device='cuda:0'",
    )
    assert empty == "tensor([], device='cuda:0', size=(0, 2))"


# ----------------------------------------------------------------------------------------------
# Property-based comparisons
# ----------------------------------------------------------------------------------------------

_FLOAT_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def _representable(value: float, dtype: np.dtype) -> float:
    """Round ``value`` to ``dtype`` so hypothesis accepts it as an element."""
    with np.errstate(over="ignore"):
        return float(np.array(value).astype(dtype))


@st.composite
def _float_arrays(draw: st.DrawFn) -> np.ndarray:
    name = draw(st.sampled_from(sorted(_FLOAT_DTYPES)))
    dtype = np.dtype(_FLOAT_DTYPES[name])
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    style = draw(st.sampled_from(["any", "ints", "small", "mixed"]))
    width = dtype.itemsize * 8
    if style == "ints":
        elements = st.integers(-(10**4), 10**4).map(float)
    elif style == "small":
        elements = st.floats(-10, 10, width=width).map(lambda v: round(v, 3))
    elif style == "mixed":
        elements = st.one_of(
            st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1e-5, 1e5, 0.5]),
            st.floats(-1e3, 1e3, width=width),
        )
    else:
        elements = st.floats(width=width)
    return draw(hnp.arrays(dtype, shape, elements=elements.map(lambda v: _representable(v, dtype))))


def _check_numpy(arr: np.ndarray) -> None:
    t = torch.from_numpy(arr.copy())
    _check(t)


@settings(max_examples=300, deadline=None)
@given(_float_arrays())
def test_random_float_arrays(arr: np.ndarray) -> None:
    _restore_defaults()
    _check_numpy(arr)


@settings(max_examples=200, deadline=None)
@given(
    arr=_float_arrays(),
    precision=st.integers(0, 8),
    linewidth=st.integers(10, 120),
    threshold=st.integers(1, 60),
    edgeitems=st.integers(0, 4),
    sci_mode=st.sampled_from([None, True, False]),
)
def test_random_float_arrays_with_options(
    arr: np.ndarray,
    precision: int,
    linewidth: int,
    threshold: int,
    edgeitems: int,
    sci_mode: bool | None,
) -> None:
    options = {
        "precision": precision,
        "linewidth": linewidth,
        "threshold": threshold,
        "edgeitems": edgeitems,
        "sci_mode": sci_mode,
    }
    try:
        torch.set_printoptions(**options)
        ts.set_printoptions(**options)
        _check_numpy(arr)
    finally:
        _restore_defaults()


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
    )
)
def test_random_int_and_bool_arrays(arr: np.ndarray) -> None:
    _restore_defaults()
    _check_numpy(arr)


@settings(max_examples=60, deadline=None)
@given(
    arr=_float_arrays(),
    requires_grad=st.booleans(),
    linewidth=st.integers(20, 100),
)
def test_random_suffix_wrapping(arr: np.ndarray, requires_grad: bool, linewidth: int) -> None:
    try:
        torch.set_printoptions(linewidth=linewidth)
        ts.set_printoptions(linewidth=linewidth)
        t = torch.from_numpy(arr.copy()).double().requires_grad_(requires_grad)
        if requires_grad:
            t = t * 1
        _check(t)
    finally:
        _restore_defaults()
