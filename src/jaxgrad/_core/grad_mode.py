"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flags are thread-local, as in torch: a ``no_grad`` block in one thread does not affect
another. Each mode works as a context manager and as a decorator (also on generators).
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any

from .typename import public_path


class _GradModeState(threading.local):
    """Per-thread grad mode; class attributes are each new thread's defaults."""

    grad = True  # whether ops record history: grad mode on and inference mode off
    grad_mode = True  # torch's GradMode, what is_grad_enabled() reports
    inference = False
    view_replay = False  # views record how to replay them from their base
    multithreading = True  # torch's device worker threads allowed (see set_multithreading_enabled)
    # how many ``recording_off`` blocks are open: while one is, an op outside grad mode is not a
    # constant to JAX's autodiff (a Function's own backward, run as a transform's rule)
    rule_depth = 0


_state = _GradModeState()


def is_grad_enabled() -> bool:
    """Whether operations currently record autograd history (thread-local).

    >>> import jaxgrad
    >>> with jaxgrad.no_grad():
    ...     jaxgrad.is_grad_enabled()
    False

    Inside ``inference_mode`` an ``enable_grad`` block turns grad mode on but nothing records,
    as in torch (inference mode excludes autograd whatever the grad mode).
    """
    return _state.grad_mode


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active in this thread.

    >>> import jaxgrad
    >>> with jaxgrad.inference_mode():
    ...     jaxgrad.is_inference_mode_enabled()
    True
    >>> jaxgrad.is_inference_mode_enabled()
    False
    """
    return _state.inference


def is_view_replay_enabled() -> bool:
    """Whether views made now record their view ops, so that a view whose base changed in
    place gets its original view's backward (``ViewBackward0``) instead of
    ``AsStridedBackward0`` (thread-local; set by ``_force_original_view_tracking``).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.grad_mode import is_view_replay_enabled
    >>> is_view_replay_enabled()
    False
    """
    return _state.view_replay


def _set_grad(enabled: bool) -> None:
    _state.grad_mode = enabled
    _state.grad = enabled and not _state.inference


class _DecoratorContextManager:
    """Base: a context manager that can also decorate functions and generator functions."""

    def __new__(cls, *args: Any, **kwargs: Any):
        # ``@no_grad`` without parentheses decorates the function directly, as in torch
        if cls in _NO_PARAM and len(args) == 1 and callable(args[0]) and not kwargs:
            return cls()(args[0])
        return super().__new__(cls)

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):  # the class becomes a function constructing it in the mode
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args: Any, **kwargs: Any) -> Any:
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return decorated

    def _wrap_generator(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # forward throw() into the generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


@public_path("jaxgrad.autograd.grad_mode")
class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block (or the decorated function).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0], requires_grad=True)
    >>> with jaxgrad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """


    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_grad(False)

    def __exit__(self, *exc: object) -> None:
        _set_grad(self._prev)


class recording_off(_DecoratorContextManager):
    """``no_grad`` for running code as a JAX transform's rule (an ``autograd.Function``'s
    ``backward`` or ``jvp`` inside ``jaxgrad.func``): nothing records in jaxgrad's graph, but the
    values stay differentiable to the transforms outside, which differentiate the rule (grad of
    grad). A user's ``no_grad`` inside a transform makes constants (``stop_gradient``).

    >>> import jaxgrad
    >>> from jaxgrad._core.grad_mode import recording_off
    >>> with recording_off():
    ...     jaxgrad.is_grad_enabled()
    False
    """

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_grad(False)
        _state.rule_depth += 1

    def __exit__(self, *exc: object) -> None:
        _state.rule_depth -= 1
        _set_grad(self._prev)


@public_path("jaxgrad.autograd.grad_mode")
class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block, e.g. within a ``no_grad`` region.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0], requires_grad=True)
    >>> with jaxgrad.no_grad(), jaxgrad.enable_grad():
    ...     (x * 2).requires_grad
    True
    """


    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_grad(True)

    def __exit__(self, *exc: object) -> None:
        _set_grad(self._prev)


@public_path("jaxgrad.autograd.grad_mode")
class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; takes effect at once, and as a context manager it restores.

    >>> import jaxgrad
    >>> _ = jaxgrad.set_grad_enabled(False); jaxgrad.is_grad_enabled()
    False
    >>> _ = jaxgrad.set_grad_enabled(True)
    """


    def __init__(self, mode: bool) -> None:
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __call__(self, func: Callable) -> Callable:
        _set_grad(self._prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _set_grad(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad(self._prev)

    def clone(self) -> set_grad_enabled:
        """A new ``set_grad_enabled`` with the same mode (used when decorating)."""
        return self.__class__(self.mode)


@public_path("jaxgrad.autograd.grad_mode")
class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors (``is_inference()``).

    >>> import jaxgrad
    >>> with jaxgrad.inference_mode():
    ...     t = jaxgrad.ones(2)
    >>> t.is_inference()
    True
    """


    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __new__(cls, mode: Any = True):
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            return cls()(mode)
        return object.__new__(cls)

    def __enter__(self) -> None:
        self._prev = (is_grad_enabled(), is_inference_mode_enabled())
        _state.inference = self.mode
        _set_grad(not self.mode)

    def __exit__(self, *exc: object) -> None:
        _state.inference = self._prev[1]
        _set_grad(self._prev[0])

    def clone(self) -> inference_mode:
        """A new ``inference_mode`` with the same mode (used when decorating)."""
        return self.__class__(self.mode)


@public_path("jaxgrad.autograd.grad_mode")
class _force_original_view_tracking(_DecoratorContextManager):
    """Set whether views record their original view ops (view replay); takes effect at once,
    and as a context manager or decorator it restores the previous setting (thread-local).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.grad_mode import _force_original_view_tracking
    >>> x = jaxgrad.ones(2, 2, requires_grad=True)
    >>> with _force_original_view_tracking(True):
    ...     v = x.clone().view(-1)
    >>> _ = v.add_(1); type(v.grad_fn).__name__
    'ViewBackward0'
    """


    def __init__(self, mode: bool) -> None:
        self.prev = is_view_replay_enabled()
        self.mode = mode
        _state.view_replay = bool(mode)

    def __call__(self, func: Callable) -> Callable:
        _state.view_replay = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _state.view_replay = bool(self.mode)

    def __exit__(self, *exc: object) -> None:
        _state.view_replay = self.prev

    def clone(self) -> _force_original_view_tracking:
        """A new one with the same mode (used when decorating)."""
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled in this thread (``set_multithreading_enabled``).

    >>> import jaxgrad
    >>> with jaxgrad.autograd.set_multithreading_enabled(False):
    ...     jaxgrad.autograd.is_multithreading_enabled()
    False
    """
    return _state.multithreading


@public_path("jaxgrad.autograd.grad_mode")
class set_multithreading_enabled(_DecoratorContextManager):
    """Enable (``True``, the default) or disable multithreaded backward in this thread, as a
    function or a context manager (restoring the previous setting on exit).

    torch runs an accelerator's backward on per-device worker threads unless this is disabled;
    a CPU backward always runs in the calling thread. jaxgrad has no device worker threads, so
    its engine runs in the calling thread either way: the switch is kept per thread, read by
    ``is_multithreading_enabled``, and changes no result.

    >>> import jaxgrad
    >>> _ = jaxgrad.autograd.set_multithreading_enabled(False)
    >>> jaxgrad.autograd.is_multithreading_enabled()
    False
    >>> _ = jaxgrad.autograd.set_multithreading_enabled(True)
    """


    def __init__(self, mode: bool) -> None:
        self.prev = _state.multithreading
        self.mode = mode
        _state.multithreading = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.multithreading = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A new one with the same mode (used when decorating)."""
        return self.__class__(self.mode)


@public_path("jaxgrad.autograd.grad_mode")
class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """On exit, put the ``_version`` of ``tensors`` (one tensor or a tuple) back to what it was
    on entry, hiding the in-place changes made inside from autograd's checks. Unsafe: a saved
    tensor modified inside then gives silently wrong gradients.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.grad_mode import _unsafe_preserve_version_counter
    >>> x = jaxgrad.ones(2)
    >>> with _unsafe_preserve_version_counter(x):
    ...     _ = x.mul_(2)
    >>> x._version, x
    (0, tensor([2., 2.]))
    """


    def __init__(self, tensors: Any) -> None:
        self.tensors = tensors if isinstance(tensors, tuple) or not hasattr(
            tensors, "_version") else (tensors,)
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _unsafe_set_version_counter(self.tensors, self.prev_versions)


def _unsafe_set_version_counter(tensors: tuple, versions: tuple) -> None:
    """Set each tensor's ``_version`` (shared with its views) to the given value (torch's
    ``torch._C._autograd._unsafe_set_version_counter``)."""
    for t, version in zip(tensors, versions):
        t._version  # noqa: B018  (inference tensors refuse, as torch's)
        if version < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {version}")
        t._vc.value = version


_NO_PARAM = (no_grad, enable_grad)
