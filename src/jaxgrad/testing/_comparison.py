"""``torch.testing.assert_close``: compare tensors, numbers and their containers as torch does.

A comparison walks both inputs together: sequences item by item, mappings key by key. Each pair of
leaves goes to the first comparer that accepts it (``None``, booleans, numbers, tensor-likes; the
relaxed set of ``TestCase.assertEqual`` adds numbers against one-element tensors, numpy arrays,
strings, sets, types and any object). A comparer checks its inputs when the walk reaches them and
returns a check to run once the whole walk has succeeded, as torch's pairs do: a wrong length or a
missing key is reported before any value.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import unittest
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._core import dtypes as _d
from .._core.dtypes import promote_types
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor, dispatches_in_python
from .._functions.comparison import isclose
from .._functions.creation import as_tensor

# {dtype: (rtol, atol)}: torch's defaults; integral and boolean dtypes compare exactly
_TOLERANCES = {
    _d.float16: (1e-3, 1e-5),
    _d.bfloat16: (1.6e-2, 1e-5),
    _d.float32: (1.3e-6, 1e-5),
    _d.float64: (1e-7, 1e-7),
    _d.complex64: (1.3e-6, 1e-5),
    _d.complex128: (1e-7, 1e-7),
}


class Mismatch(Exception):
    """An expected failure of a comparison: the exception type to raise, its message, and the
    path of the items compared (``[0]['weight']``)."""

    def __init__(self, kind: type[Exception], message: str, where: tuple = ()) -> None:
        super().__init__(message)
        self.kind, self.message, self.where = kind, message, where

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.where:
            text += f"\n\nThe failure occurred for item {''.join(str([i]) for i in self.where)}"
        return self.kind(msg(text) if callable(msg) else text)


class NotAccepted(Exception):
    """Raised by a comparer that does not handle its inputs: the next one is tried."""


@dataclass(frozen=True)
class Options:
    """What a comparison checks; ``rtol_floor``/``atol_floor`` raise the tolerances
    (``TestCase.precision`` and ``rel_tol``)."""

    rtol: float | None = None
    atol: float | None = None
    equal_nan: bool = False
    check_device: bool = True
    check_dtype: bool = True
    check_layout: bool = True
    check_stride: bool = False
    allow_subclasses: bool = True
    rtol_floor: float = 0.0
    atol_floor: float = 0.0
    number_dtypes: tuple = ((int, _d.int64), (float, _d.float64), (complex, _d.complex128))


Check = Callable[[], None]
Comparer = Callable[[Any, Any, tuple, Options], Check]


def default_tolerances(*dtypes: Any) -> tuple[float, float]:
    """The loosest default ``(rtol, atol)`` of the dtypes (tensors stand for their dtype)."""
    pairs = [_TOLERANCES.get(d.dtype if isinstance(d, Tensor) else d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _tolerances(dtypes: Sequence[Any], options: Options, where: tuple) -> tuple[float, float]:
    if (options.rtol is None) != (options.atol is None):
        missing = "rtol" if options.rtol is None else "atol"
        raise Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {missing}.", where)
    if options.rtol is not None:
        rtol, atol = options.rtol, options.atol
    else:
        rtol, atol = default_tolerances(*dtypes)
    return max(rtol, options.rtol_floor), max(atol, options.atol_floor)


def _accept_only(*inputs: Any, types: type | tuple[type, ...]) -> None:
    if not all(isinstance(i, types) for i in inputs):
        raise NotAccepted


def _difference_message(identifier: str, extra: str | None, abs_diff: float,
                        abs_at: tuple | None, atol: float, rel_diff: float,
                        rel_at: tuple | None, rtol: float) -> str:
    exact = rtol == 0 and atol == 0

    def line(kind: str, diff: float, at: tuple | None, tol: float) -> str:
        text = (f"{kind.title()} difference: {diff}" if at is None
                else f"Greatest {kind} difference: {diff} at index {at}")
        return text + ("" if exact else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if exact else 'close'}!\n\n"
    if extra:
        text += extra.strip() + "\n"
    text += line("absolute", abs_diff, abs_at, atol) + line("relative", rel_diff, rel_at, rtol)
    return text.strip()


def scalar_mismatch_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _difference_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff,
                               None, atol, rel_diff, None, rtol)


# ---- leaves --------------------------------------------------------------------------------


def compare_none(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    if not (actual is None or expected is None):
        raise NotAccepted

    def check() -> None:
        if not (actual is None and expected is None):
            raise Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", where)
    return check


def _as_bool(value: Any, where: tuple) -> bool:
    if isinstance(value, (Tensor, np.ndarray)):
        numel = value.numel() if isinstance(value, Tensor) else value.size
        if numel > 1:
            raise Mismatch(ValueError, "Only single element tensor-likes can be compared against a "
                                       f"boolean. Got {numel} elements instead.", where)
        return bool(value.item())
    return bool(value.item() if isinstance(value, np.generic) else value)


def _bools_check(actual: bool, expected: bool, where: tuple) -> Check:
    def check() -> None:
        if actual is not expected:
            raise Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", where)
    return check


def compare_bools(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    _accept_only(actual, expected, types=(bool, np.bool_))
    return _bools_check(_as_bool(actual, where), _as_bool(expected, where), where)


def compare_bools_relaxed(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    """One input a boolean; the other a boolean, a number or a one-element tensor or array."""
    bools = (bool, np.bool_)
    others = (*bools, int, float, complex, np.number, Tensor, np.ndarray)
    if not ((isinstance(actual, bools) and isinstance(expected, others))
            or (isinstance(expected, bools) and isinstance(actual, others))):
        raise NotAccepted
    return _bools_check(_as_bool(actual, where), _as_bool(expected, where), where)


def _numbers_check(actual: Any, expected: Any, where: tuple, options: Options,
                   check_type: bool) -> Check:
    dtype_of = dict(options.number_dtypes)
    rtol, atol = _tolerances([dtype_of[type(actual)], dtype_of[type(expected)]], options, where)

    def check() -> None:
        if check_type and type(actual) is not type(expected):
            raise Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                           f"{type(expected)}.", where)
        if actual == expected:
            return
        if options.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
            return
        raise Mismatch(AssertionError, scalar_mismatch_message(actual, expected, rtol, atol),
                       where)
    return check


def _as_number(value: Any) -> Any:
    return value.item() if isinstance(value, np.number) else value


def compare_numbers(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    _accept_only(actual, expected, types=(int, float, complex, np.number))
    actual, expected = _as_number(actual), _as_number(expected)
    return _numbers_check(actual, expected, where, options, options.check_dtype)


def compare_numbers_relaxed(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    """One input a number; the other a number or a one-element tensor or array. Types are not
    checked (1 equals 1.0), and floats take float32's tolerances."""
    numbers = (int, float, complex, np.number)
    others = (*numbers, Tensor, np.ndarray)
    if not ((isinstance(actual, numbers) and isinstance(expected, others))
            or (isinstance(expected, numbers) and isinstance(actual, others))):
        raise NotAccepted

    def number(value: Any) -> Any:
        if isinstance(value, (Tensor, np.ndarray)):
            numel = value.numel() if isinstance(value, Tensor) else value.size
            if numel > 1:
                raise Mismatch(ValueError, "Only single element tensor-likes can be compared "
                                           f"against a number. Got {numel} elements instead.",
                               where)
            item = value.item()
            return int(item) if isinstance(item, bool) else item
        value = _as_number(value)
        if type(value) not in (int, float, complex):
            raise NotAccepted
        return value

    actual, expected = number(actual), number(expected)
    relaxed = replace(options, number_dtypes=(
        (int, _d.int64), (float, _d.float32), (complex, _d.complex64)))
    return _numbers_check(actual, expected, where, relaxed, check_type=False)


def _tensor_check(actual: Tensor, expected: Tensor, where: tuple, options: Options) -> Check:
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options, where)

    def fail(attribute: str, a: Any, e: Any) -> None:
        raise Mismatch(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                       f"{a} != {e}.", where)

    def check() -> None:
        if actual.shape != expected.shape:
            fail("shape", actual.shape, expected.shape)
        if options.check_stride and actual.stride() != expected.stride():
            fail("stride()", actual.stride(), expected.stride())
        if options.check_device and actual.device != expected.device:
            fail("device", actual.device, expected.device)
        if options.check_dtype and actual.dtype != expected.dtype:
            fail("dtype", actual.dtype, expected.dtype)
        with no_grad():
            _compare_values(*_equalized(actual, expected), rtol, atol, options.equal_nan, where)
    return check


def _equalized(actual: Tensor, expected: Tensor) -> tuple[Tensor, Tensor]:
    """Both on the CPU if their devices differ, both in their promoted dtype, without history
    and with conjugate or negative views resolved."""
    actual, expected = (t.detach().resolve_conj().resolve_neg() for t in (actual, expected))
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    return actual, expected


def _compare_values(actual: Tensor, expected: Tensor, rtol: float, atol: float,
                    equal_nan: bool, where: tuple) -> None:
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.ndim == 0:
        message = scalar_mismatch_message(actual.item(), expected.item(), rtol, atol)
    else:
        message = _tensor_mismatch_message(actual, expected, matches, rtol, atol)
    raise Mismatch(AssertionError, message, where)


def _tensor_mismatch_message(actual: Tensor, expected: Tensor, matches: Tensor, rtol: float,
                             atol: float) -> str:
    """torch's statistics: the count of mismatches, and the greatest absolute and relative
    differences among them (computed in the tensors' dtype; integers in int64) with where."""
    total, mismatched = matches.numel(), matches.numel() - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e = actual.flatten(), expected.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.long(), e.long()
    abs_diff = (a - e).abs()
    rel_diff = abs_diff / e.abs()
    mismatch = ~matches.flatten().numpy()

    def greatest(diff: Tensor) -> tuple[float, tuple]:
        values = np.where(mismatch, diff.double().numpy(), 0.0)
        flat = int(np.nanargmax(values) if not np.isnan(values).any()
                   else np.flatnonzero(np.isnan(values))[0])
        return diff[flat].item(), tuple(int(i) for i in np.unravel_index(flat, matches.shape))

    abs_value, abs_at = greatest(abs_diff)
    rel_value, rel_at = greatest(rel_diff)
    return _difference_message("Tensor-likes", extra, abs_value, abs_at, atol, rel_value, rel_at,
                               rtol)


def _to_tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        if dispatches_in_python(value):
            # a wrapper subclass: its values come through its dispatch (torch compares it with
            # ops that dispatch to it)
            return as_tensor(value._host(), dtype=value.dtype)
        return value
    try:
        return as_tensor(value)
    except Exception:
        raise NotAccepted from None


def compare_tensor_likes(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
    """Tensors, or two objects of related types that ``as_tensor`` converts (numpy arrays)."""
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not options.allow_subclasses and type(actual) is not type(expected)):
        raise NotAccepted
    return _tensor_check(_to_tensor(actual), _to_tensor(expected), where, options)


def compare_tensors_or_arrays(actual: Any, expected: Any, where: tuple,
                              options: Options) -> Check:
    """Tensors and numpy arrays, in any mix."""
    _accept_only(actual, expected, types=(Tensor, np.ndarray))
    return _tensor_check(_to_tensor(actual), _to_tensor(expected), where, options)


def _unittest_comparer(types: type | tuple[type, ...], type_name: str) -> Comparer:
    """A comparer that falls back on ``unittest.TestCase.assertEqual`` (its messages)."""
    def compare(actual: Any, expected: Any, where: tuple, options: Options) -> Check:
        _accept_only(actual, expected, types=types)

        def check() -> None:
            case = unittest.TestCase()
            try:
                case.assertEqual(actual, expected)
            except case.failureException as error:
                raise Mismatch(AssertionError, f"{type_name.title()} comparison failed: {error}",
                               where) from None
        return check
    return compare


compare_strings = _unittest_comparer((str, bytes), "string")
compare_sets = _unittest_comparer(set, "set")
compare_types = _unittest_comparer(type, "type")
compare_objects = _unittest_comparer(object, "object")


# ---- the walk ------------------------------------------------------------------------------


def _checks(actual: Any, expected: Any, where: tuple, comparers: Sequence[Comparer],
            sequences: tuple, mappings: tuple, options: Options) -> list[Check]:
    def walk(a: Any, e: Any, at: tuple) -> list[Check]:
        return _checks(a, e, at, comparers, sequences, mappings, options)

    if (isinstance(actual, sequences) and not isinstance(actual, str)
            and isinstance(expected, sequences) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise Mismatch(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", where)
        return [c for i in range(len(actual)) for c in walk(actual[i], expected[i], (*where, i))]
    if isinstance(actual, mappings) and isinstance(expected, mappings):
        keys, expected_keys = set(actual.keys()), set(expected.keys())
        if keys != expected_keys:
            raise Mismatch(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - keys)}\n"
                f"Additional keys in the actual mapping: {sorted(keys - expected_keys)}"), where)
        ordered: Any = keys
        with contextlib.suppress(Exception):
            ordered = sorted(keys)
        return [c for k in ordered for c in walk(actual[k], expected[k], (*where, k))]
    for comparer in comparers:
        try:
            return [comparer(actual, expected, where, options)]
        except NotAccepted:
            continue
    raise Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", where)


def first_mismatch(actual: Any, expected: Any, *, comparers: Sequence[Comparer],
                   sequences: tuple = (collections.abc.Sequence,),
                   mappings: tuple = (collections.abc.Mapping,),
                   options: Options = Options()) -> Mismatch | None:
    """The first failure comparing ``actual`` with ``expected``, or None when they match."""
    checks = _checks(actual, expected, (), comparers, sequences, mappings, options)
    for check in checks:
        try:
            check()
        except Mismatch as mismatch:
            return mismatch
    return None


ASSERT_CLOSE_COMPARERS = (compare_none, compare_bools, compare_numbers, compare_tensor_likes)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Assert that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``:
    tensors (and tensor-likes such as numpy arrays), numbers and booleans, and sequences and
    mappings of them compared item by item. Floating values must satisfy
    ``|actual - expected| <= atol + rtol * |expected|`` with defaults chosen by dtype (float32:
    ``rtol=1.3e-6, atol=1e-5``); shapes, devices and dtypes must match.

    >>> import jaxgrad
    >>> from jaxgrad.testing import assert_close
    >>> assert_close(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 2.0 + 1e-7]))
    >>> assert_close(jaxgrad.tensor([1.0, 4.0, 5.0]), jaxgrad.tensor([1.0, 2.0, 3.0]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 2 / 3 (66.7%)
    Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    options = Options(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                      check_dtype=check_dtype, check_layout=check_layout,
                      check_stride=check_stride, allow_subclasses=allow_subclasses)
    try:
        mismatch = first_mismatch(actual, expected, comparers=ASSERT_CLOSE_COMPARERS,
                                  options=options)
    except Mismatch as failure:  # raised while pairing the inputs: torch ignores msg here
        raise failure.to_error() from None
    if mismatch is not None:
        raise mismatch.to_error(msg) from None


_ASSERT_ALLCLOSE_TOLERANCES = {_d.float16: (1e-3, 1e-3), _d.float32: (1e-4, 1e-5),
                               _d.float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (since torch 1.12): ``assert_close`` with dtypes promoted and torch's older,
    looser tolerances.

    >>> import warnings
    >>> import jaxgrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.testing.assert_allclose(jaxgrad.tensor([1.0]), [1.00001])
    """
    warnings.warn(
        "`jaxgrad.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `jaxgrad.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        found = [_ASSERT_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(f[0] for f in found), max(f[1] for f in found)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
