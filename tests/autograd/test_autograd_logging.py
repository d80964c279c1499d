"""torch's autograd DEBUG logging: with the ``<lib>.autograd`` logger at DEBUG, each node a
backward runs is logged after its pre-hooks as ``Executing: <node> with grad_outputs: [...]``;
the same records, in the same order, as torch's (node addresses aside)."""

from __future__ import annotations

import logging
import re

import pytest

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(re.sub(r" object at 0x[0-9a-f]+", "", record.getMessage()))


def _logged(T, program):
    logger = logging.getLogger(f"{T.__name__}.autograd")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        program(T)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return handler.messages


def _mlp(T):
    x = T.ones(2, 3, requires_grad=True)
    w = T.ones(3, 4, dtype=T.float64, requires_grad=True)
    ((x.double() @ w).relu() * 2).sum().backward()


def _with_hooks_and_grad(T):
    x = T.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 0.5)
    z = (y.exp() + y).sum()
    z.grad_fn.register_prehook(lambda gs: (gs[0] * 3,))
    T.autograd.grad(z, y, retain_graph=True)
    z.backward()


def _int_and_none_grads(T):
    x = T.ones(2, requires_grad=True)
    a, _ = x.unbind(0)
    (a * 2).backward()


@pytest.mark.parametrize("program", [_mlp, _with_hooks_and_grad, _int_and_none_grads],
                         ids=lambda f: f.__name__.strip("_"))
def test_debug_records_like_torch(program):
    torch_records = _logged(torch, program)
    assert torch_records  # (torch logs these)
    assert _logged(jaxgrad, program) == torch_records


def test_nothing_logged_above_debug():
    logger = logging.getLogger("jaxgrad.autograd")
    handler = _Records()
    logger.addHandler(handler)
    try:
        _mlp(jaxgrad)
    finally:
        logger.removeHandler(handler)
    assert handler.messages == []
