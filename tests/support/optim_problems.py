"""The optimizer tests' shared programs: a small MLP loss trained for some steps, and an
optimizer fed given gradients, both returning everything observable (parameters, gradients,
versions, state dicts, losses, repr); each test module draws its own data from its seed."""

from __future__ import annotations

import numpy as np

STEPS = 20


class Problem:
    """Data from ``seed``: an MLP's three trainable tensors (and one that never gets a
    gradient), its inputs and targets, then two starting tensors and ``STEPS`` gradients for
    them spanning 1e-3 to 10."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.weights = [rng.normal(size=shape).tolist() for shape in ((3, 4), (4,), (4, 2))]
        self.x, self.y = rng.normal(size=(5, 3)).tolist(), rng.normal(size=(5, 2)).tolist()
        self.start = rng.normal(size=(2, 6)).tolist()
        self.gradients = [[rng.normal(size=(6,)) * 10.0 ** rng.integers(-3, 2) for _ in range(2)]
                          for _ in range(STEPS)]

    def make_params(self, T, dtype=None) -> list:
        """Three trainable tensors and one that never gets a gradient."""
        dtype = dtype or T.float32
        return [T.tensor(v, dtype=dtype, requires_grad=True)
                for v in (*self.weights, [1.0, 2.0])]

    def loss_of(self, T, params):
        w1, b1, w2, _unused = params
        x, y = T.tensor(self.x, dtype=w1.dtype), T.tensor(self.y, dtype=w1.dtype)
        return ((T.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()

    def train(self, T, make_optimizer, steps=STEPS, dtype=None, groups=False) -> dict:
        """``steps`` optimizer steps on the MLP loss; everything observable at the end."""
        params = self.make_params(T, dtype)
        spec = ([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}] if groups
                else params)
        opt = make_optimizer(T, spec)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = self.loss_of(T, params)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return {"params": params, "grads": [p.grad for p in params], "losses": losses,
                "state": opt.state_dict(), "repr": repr(opt)}

    def resumed(self, T, make_optimizer) -> tuple:
        """5 steps, a state dict loaded into a new optimizer over copies of the parameters,
        then 5 more steps of each: the two runs, and the resumed optimizer's state dict."""
        params = self.make_params(T)
        opt = make_optimizer(T, params)
        self._steps(T, params, opt, 5)
        copies = [p.detach().clone().requires_grad_() for p in params]
        resumed = make_optimizer(T, copies)
        resumed.load_state_dict(opt.state_dict())
        for ps, o in ((params, opt), (copies, resumed)):
            self._steps(T, ps, o, 5)
        return params, copies, resumed.state_dict()

    def _steps(self, T, params: list, opt, steps: int) -> None:
        for _ in range(steps):
            opt.zero_grad()
            self.loss_of(T, params).backward()
            opt.step()

    def given_gradients(self, T, make, dtype=None, steps=STEPS) -> tuple:
        """The optimizer alone, fed the same gradients each step in both libraries."""
        dtype = dtype or T.float32
        params = [T.tensor(values, dtype=dtype, requires_grad=True) for values in self.start]
        opt = make(T, params)
        for grads in self.gradients[:steps]:
            for p, g in zip(params, grads):
                p.grad = T.tensor(g.tolist(), dtype=dtype)
            opt.step()
        return params, opt.state_dict()


def optimizer_class(T, module: str, name: str):
    """``T.optim.<name>`` (defined in ``T.optim.<module>``, as torch's is)."""
    cls = getattr(T.optim, name)
    assert cls.__module__ == f"{T.__name__}.optim.{module}"
    return cls
