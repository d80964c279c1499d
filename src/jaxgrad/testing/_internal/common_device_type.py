"""``torch.testing._internal.common_device_type`` for jaxgrad: device-generic test classes
instantiated once per device type jaxgrad has (``cpu``, and ``cuda`` when JAX has a GPU), with
torch's names (``TestFooCPU.test_bar_cpu_float32``) and decorators (``dtypes``, ``onlyCPU``,
``precisionOverride``...).

>>> import jaxgrad
>>> from jaxgrad.testing._internal.common_utils import TestCase
>>> from jaxgrad.testing._internal.common_device_type import dtypes, instantiate_device_type_tests
>>> class TestOnes(TestCase):
...     @dtypes(jaxgrad.float32, jaxgrad.float64)
...     def test_ones(self, device, dtype):
...         self.assertEqual(jaxgrad.ones(2, device=device, dtype=dtype).sum(), 2)
>>> scope = {"TestOnes": TestOnes}
>>> instantiate_device_type_tests(TestOnes, scope, only_for="cpu")
>>> sorted(n for n in dir(scope["TestOnesCPU"]) if n.startswith("test_"))
['test_ones_cpu_float32', 'test_ones_cpu_float64']
"""

from __future__ import annotations

import functools
import inspect
import unittest
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ... import cuda as _cuda
from ..._core.dtypes import dtype as _dtype
from .common_utils import Parametrization, TestCase, _compose, dtype_name

tol = namedtuple("tol", ["atol", "rtol"])


def _dtype_suffix(dtypes: Any) -> str:
    if isinstance(dtypes, (list, tuple)):
        return "_" + "_".join(dtype_name(d) for d in dtypes) if dtypes else ""
    return f"_{dtype_name(dtypes)}" if dtypes else ""


def _set_param(kwargs: dict, name: str, value: Any) -> None:
    """``dtype=`` for one value, ``dtypes=`` for a tuple of them (torch's plural rule)."""
    kwargs.pop(name, None)
    kwargs.pop(f"{name}s", None)
    if isinstance(value, (list, tuple)):
        kwargs[f"{name}s"] = value
    elif value is not None:
        kwargs[name] = value


class DeviceTypeTestBase(TestCase):
    """The base of each instantiated class; ``device_type`` names its device."""

    device_type: str = "generic_device_type"

    @classmethod
    def get_primary_device(cls) -> str:
        return cls.device_type if cls.device_type == "cpu" else f"{cls.device_type}:0"

    @classmethod
    def get_all_devices(cls) -> list[str]:
        if cls.device_type == "cpu":
            return ["cpu"]
        return [f"{cls.device_type}:{i}" for i in range(_cuda.device_count())]

    @classmethod
    def _dtypes_of(cls, test: Callable) -> Any:
        chosen = getattr(test, "dtypes", None)
        if chosen is None:
            return None
        return chosen.get(cls.device_type, chosen.get("all"))

    def _apply_precision_override(self, test: Callable, kwargs: dict) -> None:
        d = kwargs.get("dtype", kwargs.get("dtypes"))
        if isinstance(d, (list, tuple)):
            d = d[0] if d else None
        self.precision = getattr(test, "precision_overrides", {}).get(d, self.precision)
        tolerance = getattr(test, "tolerance_overrides", {}).get(d)
        if tolerance is not None:
            self.precision, self.rel_tol = tolerance.atol, tolerance.rtol

    @classmethod
    def instantiate_test(cls, name: str, test: Callable, *,
                         generic_cls: type | None = None) -> None:
        parametrize_fn = getattr(test, "parametrize_fn", None) or _unparametrized
        chosen = cls._dtypes_of(test)
        if chosen is not None:
            parametrize_fn = _compose(functools.partial(_over_dtypes, dtypes=chosen),
                                      parametrize_fn)
        for case, suffix, kwargs, decorators in parametrize_fn(test, generic_cls, cls):
            kwargs = dict(kwargs)
            parameters = inspect.signature(case).parameters
            if "device" in parameters or "devices" in parameters:
                device = (cls.get_all_devices() if hasattr(case, "num_required_devices")
                          else cls.get_primary_device())
                _set_param(kwargs, "device", device)
            for decorator in decorators(kwargs):
                case = decorator(case)
            d = kwargs.get("dtypes", kwargs.get("dtype"))
            full = f"{name}{'_' + suffix if suffix else ''}_{cls.device_type}{_dtype_suffix(d)}"
            if hasattr(cls, full):
                raise AssertionError(f"Redefinition of test {full}")
            setattr(cls, full, _instantiated(case, kwargs))


def _unparametrized(test: Callable, generic_cls: Any, device_cls: Any) -> Iterator[Parametrization]:
    yield test, "", {}, lambda _: []


def _over_dtypes(test: Callable, generic_cls: Any, device_cls: Any,
                 dtypes: Iterable[Any]) -> Iterator[Parametrization]:
    for d in dtypes:
        kwargs: dict = {}
        _set_param(kwargs, "dtype", d)
        yield test, "", kwargs, lambda _: []


def _instantiated(test: Callable, kwargs: dict) -> Callable:
    @functools.wraps(test)
    def instantiated(self: DeviceTypeTestBase) -> Any:
        precision, rel_tol = self.precision, self.rel_tol
        try:
            self._apply_precision_override(test, kwargs)
            return test(self, **kwargs)
        finally:
            self.precision, self.rel_tol = precision, rel_tol
    return instantiated


class CPUTestBase(DeviceTypeTestBase):
    device_type = "cpu"


class CUDATestBase(DeviceTypeTestBase):
    device_type = "cuda"


def get_device_type_test_bases() -> list[type]:
    return [CPUTestBase, *([CUDATestBase] if _cuda.is_available() else [])]


def _as_tuple(names: Any) -> tuple[str, ...]:
    if names is None:
        return ()
    return (names,) if isinstance(names, str) else tuple(names)


def instantiate_device_type_tests(generic_test_class: type, scope: dict,
                                  except_for: Any = None, only_for: Any = None,
                                  include_lazy: bool = False, allow_mps: bool = False,
                                  allow_xpu: bool = False) -> None:
    """Replace ``generic_test_class`` in ``scope`` by one class per device type
    (``<Name>CPU``, ``<Name>CUDA``), each test taking ``device`` (and ``dtype``) as arguments."""
    scope.pop(generic_test_class.__name__, None)
    empty = type("Empty" + generic_test_class.__name__, generic_test_class.__bases__, {})
    members = set(generic_test_class.__dict__) - set(empty.__dict__)
    tests = sorted(m for m in members if m.startswith("test"))
    only, excluded = _as_tuple(only_for), _as_tuple(except_for)
    for base in get_device_type_test_bases():
        if (only and base.device_type not in only) or base.device_type in excluded:
            continue
        name = generic_test_class.__name__ + base.device_type.upper()
        device_class = type(name, (base, empty), {})
        for member in members - set(tests):
            if member not in ("__dict__", "__weakref__", "__module__", "__doc__",
                              "__qualname__"):
                setattr(device_class, member, generic_test_class.__dict__[member])
        for test_name in tests:
            device_class.instantiate_test(test_name, getattr(generic_test_class, test_name),
                                          generic_cls=generic_test_class)
        device_class.__module__ = generic_test_class.__module__
        device_class.__qualname__ = name
        scope[name] = device_class


class dtypes:
    """The dtypes a device-generic test runs with (on every device, or on one:
    ``dtypes(..., device_type="cuda")``)."""

    def __init__(self, *args: Any, device_type: str = "all") -> None:
        if args and isinstance(args[0], (list, tuple)):
            for arg in args:
                if not (isinstance(arg, (list, tuple)) and all(isinstance(d, _dtype) for d in arg)):
                    raise AssertionError(f"Unknown dtype in {arg}")
        elif not all(isinstance(d, _dtype) or d is None for d in args):
            raise AssertionError(f"Unknown dtype in {args}")
        self.args, self.device_type = args, device_type

    def __call__(self, fn: Callable) -> Callable:
        chosen = dict(getattr(fn, "dtypes", {}))
        if self.device_type in chosen:
            raise AssertionError(f"dtypes redefinition for {self.device_type}")
        chosen[self.device_type] = self.args
        fn.dtypes = chosen  # type: ignore[attr-defined]
        return fn


class dtypesIfCPU(dtypes):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args, device_type="cpu")


class dtypesIfCUDA(dtypes):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args, device_type="cuda")


def _only_on(*device_types: str) -> Callable:
    def decorator(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def only(self: DeviceTypeTestBase, *args: Any, **kwargs: Any) -> Any:
            if self.device_type not in device_types:
                raise unittest.SkipTest(f"Only runs on {device_types[0]}")
            return fn(self, *args, **kwargs)
        return only
    return decorator


onlyCPU = _only_on("cpu")
onlyCUDA = _only_on("cuda")
onlyNativeDeviceTypes = _only_on("cpu", "cuda")
onlyCUDAAndPRIVATEUSE1 = _only_on("cuda")


def skipMeta(fn: Callable) -> Callable:
    """jaxgrad has no meta device: the test runs."""
    return fn


def _skip_on(device_type: str) -> Callable:
    def skip_if(condition: bool, reason: str) -> Callable:
        def decorator(fn: Callable) -> Callable:
            @functools.wraps(fn)
            def skipped(self: DeviceTypeTestBase, *args: Any, **kwargs: Any) -> Any:
                if self.device_type == device_type and condition:
                    raise unittest.SkipTest(reason)
                return fn(self, *args, **kwargs)
            return skipped
        return decorator
    return skip_if


skipCPUIf = _skip_on("cpu")
skipCUDAIf = _skip_on("cuda")


class deviceCountAtLeast:
    """The test takes ``devices``, and is skipped with fewer than ``num_required_devices``."""

    def __init__(self, num_required_devices: int) -> None:
        self.num_required_devices = num_required_devices

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def counted(self_: DeviceTypeTestBase, devices: list[str], *args: Any,
                    **kwargs: Any) -> Any:
            if len(devices) < self.num_required_devices:
                raise unittest.SkipTest(f"fewer than {self.num_required_devices} devices detected")
            return fn(self_, devices, *args, **kwargs)
        counted.num_required_devices = self.num_required_devices  # type: ignore[attr-defined]
        return counted


class precisionOverride:
    """Per-dtype ``precision`` (the absolute tolerance floor) for one test."""

    def __init__(self, d: dict) -> None:
        self.d = d

    def __call__(self, fn: Callable) -> Callable:
        fn.precision_overrides = self.d  # type: ignore[attr-defined]
        return fn


class toleranceOverride:
    """Per-dtype ``tol(atol, rtol)`` for one test."""

    def __init__(self, d: dict) -> None:
        self.d = d

    def __call__(self, fn: Callable) -> Callable:
        fn.tolerance_overrides = self.d  # type: ignore[attr-defined]
        return fn
