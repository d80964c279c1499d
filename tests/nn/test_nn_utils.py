"""nn.utils against torch: gradient clipping (clip_grad_norm_, clip_grad_value_, get_total_norm)
and parameters_to_vector/vector_to_parameters."""

from __future__ import annotations

import numpy as np
import pytest

from differential import Raised, ok, raises, same, set_weights


def _params_with_grads(T, dtype="float32"):
    rs = np.random.RandomState(6)
    params = [T.nn.Parameter(T.tensor(rs.randn(*s), dtype=getattr(T, dtype)))
              for s in ((3,), (2, 2), (4,))]
    for p in params[:2]:
        p.grad = T.tensor(rs.randn(*p.shape) * 3, dtype=p.dtype)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, "inf", 0.5, 3])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm(norm_type, max_norm, foreach):
    def program(T):
        params = _params_with_grads(T)
        total = T.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type,
                                           foreach=foreach)
        return total, [p.grad for p in params], params[2].grad

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.utils.clip_grad_norm_([], 1.0),
    lambda T: T.nn.utils.clip_grad_norm_(T.nn.Parameter(T.ones(2)), 1.0),
    lambda T: T.nn.utils.clip_grad_norm_(iter(_params_with_grads(T, "float64")), 1.0),
    lambda T: T.nn.utils.get_total_norm([T.ones(2), T.ones(3, dtype=T.float64)]),
])
def test_clip_grad_norm_edge_cases(call):
    ok(call)


def test_clip_grad_norm_nonfinite():
    def program(T):
        params = _params_with_grads(T)
        params[0].grad[0] = float("inf")
        quiet = T.nn.utils.clip_grad_norm_(params, 1.0)
        params[0].grad[0] = float("nan")
        try:
            T.nn.utils.clip_grad_norm_(params, 1.0, norm_type=2, error_if_nonfinite=True)
        except RuntimeError as exc:
            return quiet, Raised(exc)
        return quiet

    ta, _ = same(program)
    assert isinstance(ta, tuple)


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value(foreach):
    def program(T):
        params = _params_with_grads(T)
        result = T.nn.utils.clip_grad_value_(params, 1.5, foreach=foreach)
        return result, [p.grad for p in params], params[2].grad

    ok(program)


def test_parameters_vector_round_trip():
    def program(T):
        model = set_weights(T, T.nn.Sequential(T.nn.Linear(3, 2), T.nn.Linear(2, 1)))
        vec = T.nn.utils.parameters_to_vector(model.parameters())
        T.nn.utils.vector_to_parameters(vec.detach() * 2, model.parameters())
        return vec, [p for p in model.parameters()], [p._version for p in model.parameters()]

    ok(program)


def test_vector_to_parameters_wants_a_tensor():
    raises(lambda T: T.nn.utils.vector_to_parameters([1.0], [T.nn.Parameter(T.ones(1))]))
