"""DistributedDataParallel in a group of one process, against torch's (gloo): construction
errors, when the reduction is prepared (forward under ``no_sync``/``no_grad``), unused
parameters with and without ``find_unused_parameters`` (torch's error at the next forward),
``state_dict`` keys, keyword arguments to ``forward``."""

from __future__ import annotations

import importlib
import tempfile

import pytest

from differential import same
from multiprocess import free_port


def _in_group(T, body):
    """``body(T, DDP)`` in a group of one process: torch's rendezvous through a file (its
    TCPStore would listen on every interface), jaxgrad's needs none for one process."""
    dist = importlib.import_module(T.__name__ + ".distributed")
    ddp = importlib.import_module(T.__name__ + ".nn.parallel").DistributedDataParallel
    with tempfile.TemporaryDirectory() as folder:
        init = (f"file://{folder}/store" if T.__name__ == "torch"
                else f"tcp://127.0.0.1:{free_port()}")
        dist.init_process_group("gloo", init_method=init, rank=0, world_size=1)
        try:
            return body(T, ddp)
        finally:
            dist.destroy_process_group()


def _branches(T, ddp, **options):
    class Branches(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = T.nn.Linear(2, 1), T.nn.Linear(2, 1)

        def forward(self, x, use_b=False):
            return self.a(x) + (self.b(x) if use_b else 0)
    model = Branches()
    with T.no_grad():
        for i, p in enumerate(model.parameters()):
            p.fill_(0.5 * (i + 1))
    return ddp(model, **options)


def _grads(model):
    return [None if p.grad is None else p.grad.clone() for p in model.parameters()]


def test_unused_parameters_raise_at_the_next_forward():
    def body(T, ddp):
        model = _branches(T, ddp)
        model(T.ones(3, 2)).sum().backward()
        first = _grads(model)
        try:
            model(T.ones(3, 2))
            raised = None
        except RuntimeError as error:
            raised = str(error)
        return first, raised
    same(lambda T: _in_group(T, body))


@pytest.mark.parametrize("find_unused", [False, True])
def test_every_parameter_used_through_keyword_arguments(find_unused):
    def body(T, ddp):
        model = _branches(T, ddp, find_unused_parameters=find_unused)
        out = []
        for _ in range(2):
            model(T.ones(3, 2), use_b=True).pow(2).sum().backward()
            out.append(_grads(model))
        return out, list(model.state_dict()), type(model.module).__name__
    same(lambda T: _in_group(T, body))


def test_find_unused_parameters_leaves_none():
    def body(T, ddp):
        model = _branches(T, ddp, find_unused_parameters=True)
        model(T.ones(3, 2)).sum().backward()
        model(T.ones(3, 2)).sum().backward()
        return _grads(model)
    same(lambda T: _in_group(T, body))


def test_no_sync_and_no_grad_forwards():
    def body(T, ddp):
        model = _branches(T, ddp)
        with model.no_sync():
            loss = model(T.ones(3, 2), use_b=True).sum()
        loss.backward()
        with T.no_grad():
            model(T.ones(1, 2), use_b=True)
        model(T.ones(3, 2) * 2, use_b=True).sum().backward()
        return _grads(model), model.require_forward_param_sync
    same(lambda T: _in_group(T, body))


def test_construction_errors():
    def body(T, ddp):
        out = []
        frozen = T.nn.Linear(2, 1).requires_grad_(False)
        for make in (lambda: ddp(frozen), lambda: ddp(T.nn.Linear(2, 1), device_ids=[0])):
            try:
                make()
                out.append(None)
            except Exception as error:  # (the error is what is compared)
                out.append((type(error).__name__, str(error).split(",")[0]))
        return out
    same(lambda T: _in_group(T, body))
