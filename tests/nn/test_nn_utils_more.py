"""nn.utils against torch, beyond clipping: the hook forms of weight_norm and spectral_norm,
fusion of batch norm into conv/linear, stateless.functional_call, skip_init, weight memory
formats, the deprecated clip_grad_norm, and pruning."""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    Raised,
    attempt,
    captured_warnings,
    jaxgrad,
    next_functions,
    ok,
    set_weights,
    torch,
    val,
)


def _grads(module):
    return [(name, val(p.grad)) for name, p in module.named_parameters()]


def _weighted_sum(T, w):
    weights = T.arange(float(w.numel()), dtype=w.dtype).view(w.shape) - 2
    return (w * weights).sum()


def _input(T, *shape, seed=0):
    return T.tensor(np.random.RandomState(seed).randn(*shape))


# --- weight_norm (hooks) ------------------------------------------------------------------------


@pytest.mark.parametrize("make,dim", [("linear", 0), ("linear", None), ("conv", 1), ("conv", 2)])
def test_weight_norm_hook(make, dim):
    def program(T):
        module = T.nn.Linear(3, 2) if make == "linear" else T.nn.Conv1d(3, 2, 2)
        m = T.nn.utils.weight_norm(set_weights(T, module), dim=dim)
        x = _input(T, 2, 3) if make == "linear" else _input(T, 1, 3, 4)
        before = m.weight
        y = m(x)
        _weighted_sum(T, y).backward()
        return (
            list(m.state_dict()),
            [n for n, _ in m.named_parameters()],
            before,
            m.weight,
            next_functions(m.weight.grad_fn),
            y,
            _grads(m),
            len(m._forward_pre_hooks),
            repr(m),
        )

    ok(program)


def test_weight_norm_hook_removal_and_errors():
    def program(T):
        m = T.nn.utils.weight_norm(set_weights(T, T.nn.Linear(3, 2)))
        twice = attempt(lambda: T.nn.utils.weight_norm(m))
        with T.no_grad():
            m.weight_g.mul_(2)
        m(_input(T, 1, 3))
        T.nn.utils.remove_weight_norm(m)
        missing = attempt(lambda: T.nn.utils.remove_weight_norm(m))
        lazy = attempt(lambda: T.nn.utils.weight_norm(T.nn.LazyLinear(2)))
        return (
            twice,
            list(m.state_dict()),
            m.weight,
            type(m.weight).__name__,
            len(m._forward_pre_hooks),
            missing,
            lazy,
        )

    ta, _ = ok(program)
    assert isinstance(ta[0], Raised) and isinstance(ta[-1], Raised)


def test_weight_norm_hook_warns():
    def program(T):
        T.nn.utils.weight_norm(T.nn.Linear(2, 2))

    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, jaxgrad)


# --- spectral_norm (hooks) ----------------------------------------------------------------------


def _fix_vectors(T, m, name="weight"):
    with T.no_grad():
        rs = np.random.RandomState(7)
        for suffix in ("_u", "_v"):
            buf = getattr(m, name + suffix)
            buf.copy_(T.nn.functional.normalize(T.tensor(rs.randn(*buf.shape)), dim=0))


@pytest.mark.parametrize("make", ["linear", "conv", "conv_transpose"])
def test_spectral_norm_hook(make):
    def program(T):
        module = {
            "linear": lambda: T.nn.Linear(4, 3),
            "conv": lambda: T.nn.Conv2d(2, 3, 2),
            "conv_transpose": lambda: T.nn.ConvTranspose2d(2, 3, 2),
        }[make]()
        m = T.nn.utils.spectral_norm(set_weights(T, module), n_power_iterations=2)
        _fix_vectors(T, m)
        x = _input(T, 2, 4) if make == "linear" else _input(T, 1, 2, 3, 3)
        y = m(x)
        _weighted_sum(T, y).backward()
        trained = (
            m.weight_u.clone(),
            m.weight_v.clone(),
            m.weight_u._version,
            m.weight_v._version,
            m.weight,
            next_functions(m.weight.grad_fn),
        )
        m.eval()
        y_eval = m(x)
        sd = m.state_dict()
        return (
            list(sd),
            dict(sd._metadata),
            y,
            _grads(m),
            trained,
            y_eval,
            m.weight_u._version,
            repr(m),
        )

    ok(program)


def test_spectral_norm_hook_removal_and_state_dict_hooks():
    def program(T):
        m = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3)))
        _fix_vectors(T, m)
        m(_input(T, 1, 4))
        twice = attempt(lambda: T.nn.utils.spectral_norm(m))
        hooks = (len(m._state_dict_hooks), len(m._load_state_dict_pre_hooks))
        T.nn.utils.remove_spectral_norm(m)
        missing = attempt(lambda: T.nn.utils.remove_spectral_norm(m))
        none_weight = T.nn.Linear(2, 2)
        none_weight.weight = None
        return (
            twice,
            hooks,
            list(m.state_dict()),
            m.weight,
            len(m._forward_pre_hooks),
            len(m._state_dict_hooks),
            len(m._load_state_dict_pre_hooks),
            missing,
            attempt(lambda: T.nn.utils.spectral_norm(none_weight)),
            attempt(lambda: T.nn.utils.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0)),
        )

    ok(program)


def test_spectral_norm_loads_version_0_checkpoints():
    def program(T):
        src = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3)))
        _fix_vectors(T, src)
        src(_input(T, 1, 4))
        old = dict(src.state_dict())
        old["weight"] = src.weight.detach()
        del old["weight_v"]
        dst = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3), seed=1))
        result = dst.load_state_dict(old)
        fresh = T.nn.utils.spectral_norm(T.nn.Linear(4, 3))
        same_layout = fresh.load_state_dict(src.state_dict())
        return repr(result), dst.weight_v, dst.weight_orig, repr(same_layout)

    ok(program)
