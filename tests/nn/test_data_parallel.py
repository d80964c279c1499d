"""``nn.DataParallel`` on a machine without a GPU: torch's wrapper runs the module itself (its
``device_ids`` empty), with the module's state dict under ``module.``."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import ok, raises

pytestmark = pytest.mark.skipif(jaxgrad.cuda.is_available(),
                                reason="torch's CPU build answers for a machine without a GPU")


def _net(T):
    net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Tanh(), T.nn.Linear(4, 2))
    with T.no_grad():  # the same weights in both libraries
        for i, p in enumerate(net.parameters()):
            p.copy_(T.linspace(-0.5, 0.5 + i, p.numel()).reshape(p.shape))
    return net


def test_forward_and_backward_are_the_module_s():
    def program(T):
        net = _net(T).double()  # BatchNorm's gradients cancel: float32 rounds them apart
        dp = T.nn.DataParallel(net)
        x = T.linspace(-1, 1, 15, dtype=T.float64).reshape(5, 3).cos()
        out = dp(x)
        out.pow(2).sum().backward()
        return [out, net[0].weight.grad, net[1].running_mean, dp.module is net]
    ok(program)


def test_attributes_and_state_dict():
    def program(T):
        dp = T.nn.parallel.DataParallel(_net(T), device_ids=None, output_device=None, dim=1)
        return [dp.device_ids, list(dp.state_dict()), [n for n, _ in dp.named_parameters()],
                [n for n, _ in dp.named_modules()], repr(dp), type(dp).__name__,
                T.nn.DataParallel is T.nn.parallel.DataParallel, dp.training]
    ok(program)


@pytest.mark.parametrize("attr", ["dim", "output_device", "src_device_obj"])
def test_attributes_only_set_with_gpus(attr):
    raises(lambda T: getattr(T.nn.DataParallel(T.nn.Linear(1, 1)), attr))


def test_kwargs_train_eval_and_load_state_dict():
    def program(T):
        class Affine(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.tensor([2.0]))

            def forward(self, x, shift=0.0):
                return x * self.w + shift

        dp = T.nn.DataParallel(Affine())
        dp.eval()
        other = T.nn.DataParallel(Affine())
        other.load_state_dict({"module.w": T.tensor([3.0])})
        return [dp(T.ones(2), shift=1.0), dp.module.training, other(T.ones(1)),
                other.module.w.detach()]
    ok(program)


def test_optimizer_over_the_wrapper_trains_the_module():
    def program(T):
        net = _net(T)
        dp = T.nn.DataParallel(net)
        opt = T.optim.SGD(dp.parameters(), lr=0.1)
        x = T.linspace(-1, 1, 12).reshape(4, 3)
        for _ in range(2):
            opt.zero_grad()
            dp(x).pow(2).mean().backward()
            opt.step()
        return [p.detach() for p in net.parameters()]
    ok(program)
