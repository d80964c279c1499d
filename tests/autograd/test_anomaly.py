"""Anomaly mode and the engine's final callbacks, against torch.

Anomaly mode: the switches, the "Anomaly Detection has been enabled" warning, NaN checks of
backward outputs, the forward tracebacks nodes record (``grad_fn.metadata["traceback_"]``) and
the "Error detected in ..." / "Previous calculation was induced by ..." warnings. Tracebacks
are compared through the frames of this file (torch's also show its own Python wrappers).

Callbacks: ``Variable._execution_engine.queue_callback`` runs them once the current backward
is done, in order, in the backward's grad mode, reentrant backwards keeping their own.
"""

from __future__ import annotations

import io
import sys
import warnings

import pytest

from differential import attempt, captured_warnings, ok, raises

ENABLED_WARNING = "Anomaly Detection has been enabled"


def _quiet_anomaly(T, check_nan=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.autograd.detect_anomaly(check_nan=check_nan)


def _own_frames(stack):
    """The entries of a formatted stack in this file's ``program`` functions (file, line,
    code), stripped."""
    return [entry.strip() for entry in stack if __file__ in entry and " in program" in entry]


def _forward_trace_warnings(program, T):
    """The anomaly warnings a program raises: first line, and this file's frames."""
    found = []
    for _, message in captured_warnings(program, T):
        if ENABLED_WARNING in message:
            continue
        head, _, trace = message.strip("\n").partition("\n")
        found.append((head, _own_frames(trace.split("  File "))))
    return found


# --- switches ---------------------------------------------------------------------------------

def test_switches_and_their_restoration():
    def program(T):
        seen = [(T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled())]
        with _quiet_anomaly(T, check_nan=False):
            seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
            with T.autograd.set_detect_anomaly(False):
                seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
            seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        T.autograd.set_detect_anomaly(True, check_nan=False)  # a plain call sets it now
        seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        T.set_anomaly_enabled(False)
        seen.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        return seen

    ok(program)


@pytest.mark.parametrize("args", [(1,), (True, 1), ("yes", True)])
def test_set_anomaly_enabled_argument_errors(args):
    raises(lambda T: T.set_anomaly_enabled(*args))


def test_detect_anomaly_warns_when_made():
    def program(T):
        T.autograd.detect_anomaly()

    from differential import jaxgrad, torch
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_detect_anomaly_is_not_a_decorator():
    raises(lambda T: T.autograd.detect_anomaly()(lambda: None))


def test_public_paths():
    import jaxgrad
    assert jaxgrad.autograd.anomaly_mode.detect_anomaly is jaxgrad.autograd.detect_anomaly
    assert jaxgrad.autograd.anomaly_mode.__all__ == ["detect_anomaly", "set_detect_anomaly"]
    assert (repr(jaxgrad.autograd.set_detect_anomaly).replace("jaxgrad", "torch")
            == "<class 'torch.autograd.anomaly_mode.set_detect_anomaly'>")


# --- NaN checks -------------------------------------------------------------------------------

def _nan_program(check_nan):
    def program(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        with _quiet_anomaly(T, check_nan):
            y = x.sqrt() * 0.0  # SqrtBackward0 computes 0 / 0
            result = attempt(lambda: y.sum().backward())
        return result, x.grad
    return program


@pytest.mark.parametrize("check_nan", [True, False])
def test_nan_in_a_backward_output(check_nan):
    ok(_nan_program(check_nan))


def test_nan_check_names_the_output_index():
    def program(T):
        a = T.tensor([1.0], requires_grad=True)
        b = T.tensor([0.0], requires_grad=True)
        with _quiet_anomaly(T):
            out = a / b.sqrt()  # DivBackward0: output 0 is inf, output 1 is nan
            return [attempt(lambda: (out * 0.0).backward())]

    ok(program)


def test_no_nan_check_outside_anomaly_mode():
    ok(lambda T: (lambda x: ((x.sqrt() * 0.0).sum().backward(), x.grad)[1])(
        T.tensor([0.0], requires_grad=True)))


# --- forward tracebacks -----------------------------------------------------------------------

def test_nodes_record_the_forward_traceback():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with _quiet_anomaly(T):
            y = x * 2
            z = y.exp()
        w = z.sum()
        return [_own_frames(y.grad_fn.metadata["traceback_"]),
                _own_frames(z.grad_fn.metadata["traceback_"]),
                sorted(w.grad_fn.metadata)]

    ok(program)


def test_error_in_a_node_warns_its_forward_traceback():
    def program(T):
        with _quiet_anomaly(T):
            a = T.randn(5, requires_grad=True)
            d1 = a + 1
            d2 = d1**2
            d1 += 1
            T.autograd.grad(d2.sum(), a)

    from differential import jaxgrad, torch
    found = _forward_trace_warnings(program, jaxgrad)
    assert found == _forward_trace_warnings(program, torch)
    assert found[0][0].startswith("Error detected in PowBackward0.")


def test_error_in_an_accumulator_warns_the_leafs_first_use():
    def program(T):
        with _quiet_anomaly(T):
            x = T.ones(2, requires_grad=True)
            x.register_post_accumulate_grad_hook(lambda t: 1 / 0)
            y = x * 2
            (y + x).sum().backward()

    from differential import jaxgrad, torch
    found = _forward_trace_warnings(program, jaxgrad)
    assert found == _forward_trace_warnings(program, torch)
    assert found[0][1] and found[0][1][-1].endswith("y = x * 2")


def test_error_without_forward_information():
    def program(T):
        x = T.tensor([0.0], requires_grad=True)
        y = x.sqrt() * 0.0
        with _quiet_anomaly(T):
            y.sum().backward()

    from differential import jaxgrad, torch
    assert _forward_trace_warnings(program, jaxgrad) == _forward_trace_warnings(program, torch)


def test_error_warning_turned_error_goes_to_stderr():
    def program(T):
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            with _quiet_anomaly(T):
                warnings.simplefilter("error")
                a = T.ones(3, requires_grad=True)
                d1 = a + 1
                d2 = d1 * d1
                d1 += 1
                error = attempt(lambda: d2.sum().backward())
            written = sys.stderr.getvalue()
        finally:
            sys.stderr = stderr
        return written.splitlines()[0], _own_frames(written.split("  File ")), str(error)[:150]

    with warnings.catch_warnings():
        ok(program)


def test_version_error_hint_in_anomaly_mode():
    def program(T):
        with _quiet_anomaly(T):
            a = T.ones(3, requires_grad=True)
            d1 = a + 1
            d2 = d1 * d1
            d1 += 1
            return [attempt(lambda: d2.sum().backward())]

    ok(program)


def test_parent_traceback_of_a_double_backward():
    def program(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        with _quiet_anomaly(T):
            y = x.sqrt()
            (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
            (g * 0.0).sum().backward()  # 0 / 0 in a node the grad call made

    from differential import jaxgrad, torch

    def parents(lib):
        return [(head, frames) for head, frames in _forward_trace_warnings(program, lib)
                if head.startswith("Previous calculation")]

    assert parents(jaxgrad) == parents(torch)
    assert parents(jaxgrad)


def test_metadata_parent_of_nodes_made_in_backward():
    def program(T):
        x = T.ones(2, requires_grad=True)
        y = x.exp()
        with _quiet_anomaly(T):
            (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        before = "parent_" in g.grad_fn.metadata
        (h,) = T.autograd.grad(y.sum(), x, create_graph=True)
        return before, "parent_" in h.grad_fn.metadata, "traceback_" in h.grad_fn.metadata

    ok(program)


def test_function_node_records_its_forward_traceback():
    def program(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("Some error in backward")

        with _quiet_anomaly(T):
            x = T.ones(2, requires_grad=True)
            Bad.apply(x).sum().backward()

    from differential import jaxgrad, torch
    assert _forward_trace_warnings(program, jaxgrad) == _forward_trace_warnings(program, torch)


def test_metadata_stays_empty_when_the_mode_is_off():
    ok(lambda T: dict((T.ones(2, requires_grad=True) * 2).grad_fn.metadata))


# --- final callbacks --------------------------------------------------------------------------

def _engine(T):
    return T.autograd.Variable._execution_engine


def test_queue_callback_outside_backward():
    raises(lambda T: _engine(T).queue_callback(lambda: None))


@pytest.mark.parametrize("how", ["backward", "grad", "create_graph", "inputs"])
def test_callbacks_run_after_the_graph_in_order(how):
    def program(T):
        engine, log = _engine(T), []
        x = T.ones(2, requires_grad=True)
        y = x * 2

        def hook(g):
            log.append(("hook", T.is_grad_enabled(), engine.is_checkpoint_valid()))
            engine.queue_callback(lambda: log.append(("first", T.is_grad_enabled())))
            engine.queue_callback(lambda: (log.append("second"),
                                           engine.queue_callback(lambda: log.append("third"))))

        y.register_hook(hook)
        z = (y * y).sum()
        z.register_hook(lambda g: log.append("root hook"))
        if how == "grad":
            T.autograd.grad(z, x)
        elif how == "inputs":
            z.backward(inputs=[x])
        else:
            z.backward(create_graph=how == "create_graph")
        log.append(engine.is_checkpoint_valid())
        return log

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok(program)


def test_callback_errors_propagate():
    def program(T):
        x = T.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: _engine(T).queue_callback(lambda: 1 / 0))
        return attempt(lambda: y.sum().backward()), x.grad

    ok(program)


def test_callback_queued_by_a_function_backward_adds_a_callback():
    def program(T):
        called = []

        class MyFunc(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                _engine(T).queue_callback(
                    lambda: (called.append(1), _engine(T).queue_callback(lambda: called.append(2))))
                return grad

        MyFunc.apply(T.rand(3, requires_grad=True)).sum().backward()
        return called

    ok(program)


@pytest.mark.parametrize("depths", [(0,), (1,), (0, 1)])
def test_reentrant_backward_keeps_its_own_callbacks(depths):
    def program(T):
        log = []

        class Inner(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                if 1 in depths:
                    _engine(T).queue_callback(lambda: log.append("inner"))
                return g

        class Outer(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                if 0 in depths:
                    _engine(T).queue_callback(lambda: log.append("outer"))
                t = g.detach().requires_grad_()
                with T.enable_grad():
                    out = Inner.apply(t).sum()
                out.backward()
                log.append("reentrant done")
                return g

        Outer.apply(T.rand(3, requires_grad=True)).sum().backward()
        return log

    ok(program)


def test_run_backward():
    def program(T):
        engine = _engine(T)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        unused = T.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        one = T.tensor(1.0)
        return [engine.run_backward((y,), (one,), True, False, (x,), False, False),
                attempt(lambda: engine.run_backward((y,), (one,), True, False, (x, unused),
                                                    False, False)),
                engine.run_backward((y,), (one,), True, False, (x, unused), True, False),
                engine.run_backward((y,), (one,), True, False, (), True, True), x.grad,
                attempt(lambda: engine.run_backward((y,), (None,), True, False, (), True, True)),
                attempt(lambda: engine.run_backward((y,), (one,), True, False))]

    ok(program)
