"""``torch.testing._internal.common_utils`` for jaxgrad: the ``TestCase``, parametrization and
flags PyTorch's own test files import, so that those files run with jaxgrad bound as ``torch``.

``TestCase.assertEqual`` compares as torch's does (``assert_close`` with relaxed pairing: a number
against a one-element tensor, tensors against numpy arrays, ``NaN`` equal to ``NaN``, tolerances
raised by ``precision`` and ``rel_tol``). The flags describe this machine and jaxgrad: no
TorchDynamo, no ROCm, CUDA when JAX has a GPU.

>>> from jaxgrad.testing._internal.common_utils import TestCase
>>> import jaxgrad
>>> TestCase().assertEqual(jaxgrad.tensor([1.0, 2.0]), [1.0, 2.0])
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import platform
import random
import re
import sys
import tempfile
import unittest
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ... import (
    as_tensor,
    get_default_dtype,
    get_rng_state,
    is_grad_enabled,
    is_warn_always_enabled,
    manual_seed,
    ones_like,
    set_grad_enabled,
    set_rng_state,
    set_warn_always,
    tensor,
)
from ... import autograd as _autograd
from ... import cuda as _cuda
from ... import set_default_dtype as _set_default_dtype
from ..._core.dtypes import ALL_DTYPES
from ..._core.dtypes import dtype as _dtype
from ..._core.tensor import Tensor
from ...nn import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ...utils.data import Subset
from .._comparison import (
    Mismatch,
    Options,
    compare_bools_relaxed,
    compare_none,
    compare_numbers_relaxed,
    compare_objects,
    compare_sets,
    compare_strings,
    compare_tensors_or_arrays,
    compare_types,
    first_mismatch,
)

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform == "linux"
IS_ARM64 = platform.machine() in ("arm64", "aarch64")
IS_PPC = platform.machine() == "ppc64le"
IS_S390X = platform.machine() == "s390x"
IS_X86 = platform.machine() in ("x86_64", "i386")
IS_CI = bool(os.getenv("CI"))
IS_FBCODE = IS_SANDCASTLE = IS_REMOTE_GPU = IS_JETSON = False
TEST_WITH_TORCHDYNAMO = TEST_WITH_TORCHINDUCTOR = TEST_WITH_AOT_EAGER = False
TEST_WITH_ROCM = TEST_WITH_ASAN = TEST_WITH_TSAN = TEST_WITH_UBSAN = TEST_WITH_CROSSREF = False
TEST_WITH_DEV_DBG_ASAN = TEST_WITH_SLOW = TEST_SKIP_FAST = TEST_CUDA_MEM_LEAK_CHECK = False
TEST_WITH_SLOW_GRADCHECK = os.getenv("PYTORCH_TEST_WITH_SLOW_GRADCHECK", "0") == "1"
TEST_CUDA = _cuda.is_available()
TEST_MPS = TEST_XPU = TEST_HPU = TEST_MKL = TEST_MKLDNN = False
TEST_NUMPY = True
TEST_LAPACK = True  # JAX's linear algebra is always there
NO_MULTIPROCESSING_SPAWN = False
TEST_SCIPY = True
try:
    import scipy  # noqa: F401
except ImportError:
    TEST_SCIPY = False

SEED = 1234


def set_rng_seed(seed: int | None = None) -> None:
    """Seed jaxgrad, Python's ``random`` and numpy (``SEED`` by default)."""
    seed = SEED if seed is None else seed
    manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


@contextlib.contextmanager
def freeze_rng_state() -> Iterator[None]:
    """Restore the default generator's state on exit."""
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


@contextlib.contextmanager
def set_default_dtype(d: _dtype) -> Iterator[None]:
    """Within the block, ``d`` is the default floating dtype."""
    saved = get_default_dtype()
    _set_default_dtype(d)
    try:
        yield
    finally:
        _set_default_dtype(saved)


@contextlib.contextmanager
def set_warn_always_context(new_val: bool) -> Iterator[None]:
    old = is_warn_always_enabled()
    set_warn_always(new_val)
    try:
        yield
    finally:
        set_warn_always(old)


@contextlib.contextmanager
def TemporaryFileName(*args: Any, **kwargs: Any) -> Iterator[str]:
    with tempfile.NamedTemporaryFile(*args, delete=False, **kwargs) as f:
        name = f.name
    try:
        yield name
    finally:
        os.unlink(name)


@contextlib.contextmanager
def TemporaryDirectoryName(suffix: str | None = None) -> Iterator[str]:
    with tempfile.TemporaryDirectory(suffix=suffix) as name:
        yield name


@contextlib.contextmanager
def disable_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def gradcheck(fn: Callable, inputs: Any, **kwargs: Any) -> bool:
    """``autograd.gradcheck`` with torch's test defaults: batched gradients checked, fast mode
    (slow mode when ``PYTORCH_TEST_WITH_SLOW_GRADCHECK=1``)."""
    return _autograd.gradcheck(fn, inputs, **_checked_by_default(kwargs))


def gradgradcheck(fn: Callable, inputs: Any, grad_outputs: Any = None, **kwargs: Any) -> bool:
    """``autograd.gradgradcheck`` with the defaults of :func:`gradcheck`."""
    return _autograd.gradgradcheck(fn, inputs, grad_outputs, **_checked_by_default(kwargs))


def _checked_by_default(kwargs: dict) -> dict:
    defaults = {"check_batched_grad": True, "fast_mode": not TEST_WITH_SLOW_GRADCHECK}
    return {**kwargs, **{k: v for k, v in defaults.items() if kwargs.get(k) is None}}


# ---- skips and marks -----------------------------------------------------------------------


def _skip_if(condition: bool, reason: str) -> Callable:
    return unittest.skipIf(condition, reason)


def skipIfTorchDynamo(msg: str = "test doesn't currently work with dynamo") -> Callable:
    if not isinstance(msg, str):
        raise AssertionError("Are you using skipIfTorchDynamo correctly?")
    return _skip_if(TEST_WITH_TORCHDYNAMO, msg)


def skipIfTorchInductor(msg: str = "test doesn't currently work with torchinductor",
                        condition: bool = True) -> Callable:
    return _skip_if(TEST_WITH_TORCHINDUCTOR and condition, msg)


def _identity_or_decorator(fn: Any = None, **_: Any) -> Any:
    """A mark that changes nothing here (the configuration it marks for is not this one), used
    bare (``@mark``) or called (``@mark(...)``)."""
    if callable(fn):
        return fn
    return lambda f: f


xfailIfTorchDynamo = _identity_or_decorator
markDynamoStrictTest = _identity_or_decorator
skipIfRocm = _identity_or_decorator
skipIfXpu = _identity_or_decorator
skipIfHpu = _identity_or_decorator
skipIfMPS = _identity_or_decorator
skipIfNoLapack = _identity_or_decorator
skipIfCrossRef = _identity_or_decorator
skipIfWindows = _skip_if(IS_WINDOWS, "not supported on Windows")
skipIfNoSciPy = _skip_if(not TEST_SCIPY, "test require SciPy, but SciPy not found")
skipCUDAMemoryLeakCheckIf = _identity_or_decorator
skipCUDANonDefaultStreamIf = _identity_or_decorator


def slowTest(fn: Callable) -> Callable:
    """Marks a slow test: skipped unless ``PYTORCH_TEST_WITH_SLOW=1``, as in torch."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not TEST_WITH_SLOW:
            raise unittest.SkipTest("test is slow; run with PYTORCH_TEST_WITH_SLOW to enable test")
        return fn(*args, **kwargs)
    wrapper.slow_test = True  # type: ignore[attr-defined]
    return wrapper


# ---- parametrization -----------------------------------------------------------------------

# A parametrization yields (test, name suffix, keyword arguments, decorators for them).
Parametrization = tuple[Callable, str, dict, Callable[[dict], list]]


class _TestParametrizer:
    """A decorator that sets ``fn.parametrize_fn``; stacked ones compose as a product, the
    upper decorator's name first."""

    def _parametrize_test(self, test: Callable, generic_cls: type,
                          device_cls: type | None) -> Iterator[Parametrization]:
        raise NotImplementedError

    def __call__(self, fn: Callable) -> Callable:
        old = getattr(fn, "parametrize_fn", None)
        fn.parametrize_fn = (self._parametrize_test if old is None  # type: ignore[attr-defined]
                             else _compose(old, self._parametrize_test))
        return fn


def _compose(old: Callable, new: Callable) -> Callable:
    def composite(test: Callable, generic_cls: type,
                  device_cls: type | None) -> Iterator[Parametrization]:
        for old_test, old_name, old_kwargs, old_decorators in old(test, generic_cls, device_cls):
            for new_test, new_name, new_kwargs, new_decorators in new(old_test, generic_cls,
                                                                      device_cls):
                repeated = set(old_kwargs) & set(new_kwargs)
                if repeated:
                    raise RuntimeError(
                        "Parametrization over the same parameter by multiple parametrization "
                        f'decorators is not supported. For test "{test.__name__}", the following '
                        f"parameters are handled multiple times: {repeated}")
                name = "_".join(n for n in (new_name, old_name) if n)
                yield (new_test, name, {**old_kwargs, **new_kwargs},
                       lambda kw, a=old_decorators, b=new_decorators: [*a(kw), *b(kw)])
    return composite


class subtest:
    """One explicit case of :class:`parametrize`: its values, an optional name and decorators."""

    __slots__ = ("arg_values", "decorators", "name")

    def __init__(self, arg_values: Any, name: str | None = None,
                 decorators: Iterable[Callable] | None = None) -> None:
        self.arg_values, self.name = arg_values, name
        self.decorators = list(decorators) if decorators else []


def dtype_name(d: _dtype) -> str:
    return d.name


class parametrize(_TestParametrizer):
    """Run a test once per value (or tuple of values) of its comma-separated arguments; each
    generated test is named ``test_<name>_<arg>_<value>`` (a dtype by its name, other objects
    by position), by ``name_fn`` or by a :class:`subtest`'s name.

    >>> from jaxgrad.testing._internal.common_utils import (
    ...     TestCase, instantiate_parametrized_tests, parametrize)
    >>> @instantiate_parametrized_tests
    ... class T(TestCase):
    ...     @parametrize("x", [1, 2.5])
    ...     def test_x(self, x): pass
    >>> sorted(n for n in dir(T) if n.startswith("test_"))
    ['test_x_x_1', 'test_x_x_2_5']
    """

    def __init__(self, arg_str: str, arg_values: Iterable[Any],
                 name_fn: Callable[..., str] | None = None) -> None:
        self.arg_names = [s.strip() for s in arg_str.split(",") if s != ""]
        self.arg_values, self.name_fn = arg_values, name_fn

    @staticmethod
    def _formatted(idx: int, name: str, value: Any) -> str:
        if isinstance(value, _dtype):
            return dtype_name(value)
        if type(value).__name__ == "device":
            return str(value)
        if type(value).__name__ in ("OpInfo", "ModuleInfo"):
            return value.formatted_name
        if isinstance(value, (int, float, str)):
            return f"{name}_{str(value).replace('.', '_')}"
        return f"{name}{idx}"

    def _name(self, idx: int, values: list, explicit: str | None) -> str:
        if explicit:
            return explicit
        if self.name_fn:
            return self.name_fn(*values)
        return "_".join(self._formatted(idx, a, v) for a, v in zip(self.arg_names, values))

    def _parametrize_test(self, test: Callable, generic_cls: type,
                          device_cls: type | None) -> Iterator[Parametrization]:
        if not self.arg_names:
            yield test, "", {}, lambda _: []
            return
        produced = False
        for idx, values in enumerate(self.arg_values):
            produced = True
            explicit, decorators, generated = None, [], test
            if isinstance(values, subtest):
                explicit, decorators, values = values.name, values.decorators, values.arg_values
                generated = functools.wraps(test)(lambda *a, _t=test, **k: _t(*a, **k))
            values = list(values) if len(self.arg_names) > 1 else [values]
            if len(values) != len(self.arg_names):
                raise RuntimeError(f"Expected # values == # arg names, but got: {len(values)} "
                                   f"values and {len(self.arg_names)} names for test "
                                   f'"{test.__name__}"')
            yield (generated, self._name(idx, values, explicit),
                   dict(zip(self.arg_names, values)), lambda _, d=decorators: d)
        if not produced:
            raise ValueError(f"{test}: An empty arg_values was passed to @parametrize. Note that "
                             "this may result from reuse of a generator.")


class decorateIf(_TestParametrizer):
    """Apply ``decorator`` to the parametrized cases whose arguments satisfy ``predicate_fn``."""

    def __init__(self, decorator: Callable, predicate_fn: Callable[[dict], bool]) -> None:
        self.decorator, self.predicate_fn = decorator, predicate_fn

    def _parametrize_test(self, test: Callable, generic_cls: type,
                          device_cls: type | None) -> Iterator[Parametrization]:
        yield test, "", {}, lambda kw: [self.decorator] if self.predicate_fn(kw) else []


def instantiate_parametrized_tests(generic_cls: type) -> type:
    """Replace each parametrized test of ``generic_cls`` by its generated tests (also usable as
    a class decorator)."""
    for attr in tuple(dir(generic_cls)):
        test = getattr(generic_cls, attr)
        if not hasattr(test, "parametrize_fn"):
            continue
        delattr(generic_cls, attr)
        for case, suffix, kwargs, decorators in test.parametrize_fn(test, generic_cls, None):
            name = f"{case.__name__}_{suffix}" if suffix else case.__name__
            for decorator in decorators(kwargs):
                case = decorator(case)
            if hasattr(generic_cls, name):
                raise AssertionError(f"Redefinition of test {name}")
            setattr(generic_cls, name, _bound_case(case, kwargs))
    return generic_cls


def _bound_case(test: Callable, kwargs: dict) -> Callable:
    @functools.wraps(test)
    def instantiated(self: Any) -> Any:
        return test(self, **kwargs)
    return instantiated


# ---- the test case -------------------------------------------------------------------------

_RELAXED_COMPARERS = (compare_none, compare_bools_relaxed, compare_numbers_relaxed,
                      compare_tensors_or_arrays, compare_strings, compare_sets, compare_types,
                      compare_objects)
_SEQUENCES = (Sequence, Sequential, ModuleList, ParameterList, Subset)
_MAPPINGS = (Mapping, ModuleDict, ParameterDict)


def _torch_dtype_exists(array: np.ndarray) -> bool:
    return any(array.dtype == d.np for d in ALL_DTYPES)


class TestCase(unittest.TestCase):
    """``unittest.TestCase`` as torch's tests use it: seeded before each test, grad mode restored
    after, and ``assertEqual`` comparing tensors, arrays, numbers and containers as torch does."""

    _precision: float = 0
    _rel_tol: float = 0
    maxDiff = None
    longMessage = True

    def __init__(self, method_name: str = "runTest", methodName: str = "runTest") -> None:
        super().__init__(methodName if methodName != "runTest" else method_name)

    @property
    def precision(self) -> float:
        return self._precision

    @precision.setter
    def precision(self, value: float) -> None:
        self._precision = value

    @property
    def rel_tol(self) -> float:
        return self._rel_tol

    @rel_tol.setter
    def rel_tol(self, value: float) -> None:
        self._rel_tol = value

    def setUp(self) -> None:
        set_rng_seed()
        self._prev_grad_state = is_grad_enabled()

    def tearDown(self) -> None:
        if hasattr(self, "_prev_grad_state"):
            set_grad_enabled(self._prev_grad_state)

    def assertEqual(self, x: Any, y: Any, msg: str | Callable[[str], str] | None = None, *,
                    atol: float | None = None, rtol: float | None = None,
                    equal_nan: bool = True, exact_dtype: bool = True, exact_device: bool = False,
                    exact_layout: bool = False, exact_stride: bool = False,
                    exact_is_coalesced: bool = False) -> None:
        __tracebackhide__ = True
        if any(isinstance(v, np.ndarray) and not _torch_dtype_exists(v) for v in (x, y)):
            x, y = (list(v.tolist() if isinstance(v, (Tensor, np.ndarray)) else v)
                    for v in (x, y))
        elif isinstance(x, Tensor) and isinstance(y, Sequence):
            y = _as_tensor_like(y, x)
        elif isinstance(x, Sequence) and isinstance(y, Tensor):
            x = _as_tensor_like(x, y)
        options = Options(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=exact_device,
                          check_dtype=exact_dtype, check_layout=exact_layout,
                          check_stride=exact_stride, rtol_floor=self.rel_tol,
                          atol_floor=self.precision)
        try:
            mismatch = first_mismatch(x, y, comparers=_RELAXED_COMPARERS, sequences=_SEQUENCES,
                                      mappings=_MAPPINGS, options=options)
        except Mismatch as failure:  # pairing failed (a length, keys, an unknown type)
            mismatch = failure
        if mismatch is not None:
            raise mismatch.to_error(
                (lambda generated: f"{generated}\n{msg}")
                if isinstance(msg, str) and self.longMessage else msg) from None

    def assertNotEqual(self, x: Any, y: Any, msg: str | None = None, *,
                       atol: float | None = None, rtol: float | None = None,
                       **kwargs: Any) -> None:
        with self.assertRaises(AssertionError, msg=msg):
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)

    def assertEqualIgnoreType(self, *args: Any, **kwargs: Any) -> None:
        self.assertEqual(*args, exact_dtype=False, **kwargs)

    def assertEqualBroadcasting(self, x: Any, y: Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(y, Iterable):
            y = ones_like(x) * y
        if not isinstance(y, Tensor):
            y = ones_like(x) * tensor(y)
        self.assertEqual(x, y, *args, **kwargs)

    def assertNotWarn(self, callable: Callable, msg: str = "") -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                callable()
            self.assertTrue(len(caught) == 0, msg)

    @contextlib.contextmanager
    def assertWarnsOnceRegex(self, category: type[Warning], regex: str = "") -> Iterator[None]:
        """The code must warn (``set_warn_always`` makes warn-once warnings warn every time)."""
        pattern = re.compile(regex)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                yield
            if not caught:
                self.fail("no warning caught")
            self.assertTrue(any(type(w.message) is category for w in caught))
            matching = [w.message for w in caught if type(w.message) is category]
            self.assertTrue(any(re.match(pattern, str(w.message)) for w in caught),
                            f"{pattern}, {matching}")

    def assertExpectedInline(self, actual: str, expect: str, skip: int = 0) -> None:
        """``actual`` must equal the expected text written inline in the test."""
        self.assertMultiLineEqual(expect, actual)

    def assertExpectedRaisesInline(self, exc_type: type[BaseException], callable: Callable,
                                   expect: str, *args: Any, **kwargs: Any) -> None:
        try:
            callable(*args, **kwargs)
        except exc_type as e:
            self.assertExpectedInline(str(e), expect)
            return
        self.fail(msg="Did not raise when expected to")

    def assertLeaksNoCudaTensors(self, name: str | None = None
                                 ) -> contextlib.AbstractContextManager:
        """jaxgrad has no CUDA caching allocator to account: nothing can leak there."""
        return contextlib.nullcontext()

    def assertObjectIn(self, obj: Any, iterable: Iterable[Any]) -> None:
        if not any(id(obj) == id(e) for e in iterable):
            raise AssertionError("object not found in iterable")

    def runWithPytorchAPIUsageStderr(self, code: str) -> str:
        raise unittest.SkipTest("PyTorch's API usage logging does not exist in jaxgrad")


def _as_tensor_like(values: Sequence, like: Tensor) -> Tensor:
    return as_tensor(values, dtype=like.dtype, device=like.device)


def run_tests(argv: list[str] | None = None) -> None:
    """Run the calling module's tests with ``unittest``."""
    unittest.main(module="__main__", argv=argv if argv is not None else sys.argv)

