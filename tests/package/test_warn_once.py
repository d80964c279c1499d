"""jaxgrad's once-per-process warnings (torch's TORCH_WARN_ONCE) point at the user's line,
however deep inside jaxgrad they are raised, as torch's do for the ops torch implements in C++."""

import warnings

import pytest

import jaxgrad

WARN_ONCE_PROGRAMS = {
    "scatter with reduce": lambda: jaxgrad.zeros(3).scatter(0, jaxgrad.tensor([0, 1]),
                                                            jaxgrad.ones(2), reduce="add"),
    "scatter_ with reduce": lambda: jaxgrad.zeros(3).scatter_(0, jaxgrad.tensor([0, 1]),
                                                              jaxgrad.ones(2), reduce="add"),
    "meshgrid": lambda: jaxgrad.meshgrid(jaxgrad.arange(2), jaxgrad.arange(3)),
    "cross": lambda: jaxgrad.cross(jaxgrad.ones(2, 3), jaxgrad.ones(2, 3)),
    "index_reduce method": lambda: jaxgrad.zeros(3).index_reduce(
        0, jaxgrad.tensor([0, 1]), jaxgrad.ones(2), "prod"),
    "index_reduce function": lambda: jaxgrad.index_reduce(
        jaxgrad.zeros(3), 0, jaxgrad.tensor([0, 1]), jaxgrad.ones(2), "prod"),
    "float of a requires_grad tensor": lambda: float(jaxgrad.ones(1, requires_grad=True)),
}


@pytest.mark.parametrize("name", WARN_ONCE_PROGRAMS)
def test_a_warn_once_warning_points_at_the_users_line(name, monkeypatch):
    monkeypatch.setattr(jaxgrad._core.warn_once._state, "given", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        WARN_ONCE_PROGRAMS[name]()
        WARN_ONCE_PROGRAMS[name]()
    assert [w.filename for w in caught] == [__file__]


def test_engine_warnings_point_at_the_users_backward_call():
    """Warnings given while backward runs (a full backward hook on a module whose inputs do not
    require grad) point at the user's ``backward()`` line, as torch's engine's do."""
    model = jaxgrad.nn.Linear(2, 1)
    model.register_full_backward_hook(lambda module, grad_input, grad_output: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model(jaxgrad.ones(1, 2)).sum().backward()
    assert [(w.filename, w.message.args[0][:34]) for w in caught] == [
        (__file__, "Full backward hook is firing when ")]


USER_LINE_PROGRAMS = {
    "out= resized": lambda: jaxgrad.exp(jaxgrad.ones(3), out=jaxgrad.zeros(2)),
    "masked_fill_ on an expand": lambda: jaxgrad.ones(()).expand(3).masked_fill_(
        jaxgrad.tensor([True, False, False]), 1.0),
    "index_put_ on an expand": lambda: jaxgrad.ones(()).expand(3).index_put_(
        (jaxgrad.tensor([0]),), jaxgrad.ones(1)),
}


@pytest.mark.parametrize("name", USER_LINE_PROGRAMS)
def test_warnings_of_ops_point_at_the_users_line(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        USER_LINE_PROGRAMS[name]()
    assert caught and [w.filename for w in caught] == [__file__] * len(caught)
