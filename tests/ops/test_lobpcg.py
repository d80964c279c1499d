"""lobpcg: the k extreme eigenpairs (values, eigenvectors up to sign, B-orthonormality), its
node, its gradients (torch's, through the symmetrised A) and torch's errors. Every case runs on
torch and on jaxgrad (``differential.same``) with the same matrices. (torch's iterations write
into its results in place, so their ``_version`` counts iterations: results are compared as
clones.)"""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, ok, same

torch = pytest.importorskip("torch")


def _spd(T, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random(shape)
    a = a @ np.swapaxes(a, -1, -2) / 10
    return T.tensor(a, dtype=T.float64)


def _signed(T, U):
    """Each eigenvector with its largest entry made positive (the sign is arbitrary)."""
    _, idx = U.abs().max(-2, keepdim=True)
    return U * U.gather(-2, idx).sign()


@pytest.mark.parametrize("largest", [True, False, None])
@pytest.mark.parametrize("k,shape", [(1, (6, 6)), (2, (2, 6, 6)), (3, (2, 2, 9, 9))])
def test_values_vectors_and_gradient(k, shape, largest):
    def program(T):
        A = _spd(T, shape).requires_grad_()
        X = T.eye(shape[-1], k, dtype=T.float64).expand(*shape[:-1], k)
        D, U = T.lobpcg(A, k=k, X=X, largest=largest)
        U = _signed(T, U)
        (D.sum() + (U * T.arange(1.0, k + 1, dtype=T.float64)).sum()).backward()
        return (D.detach().clone(), U.detach().clone(), D.grad_fn.name(), D.grad_fn is U.grad_fn,
                A.grad, (A.grad - A.grad.mT).abs().max().item() == 0)
    ok(program, rtol=1e-6)


def test_generalized_problem_and_no_grad_call():
    def program(T):
        A = _spd(T, (9, 9))
        B = _spd(T, (9, 9), seed=1) + T.eye(9, dtype=T.float64)
        D, U = T.lobpcg(A, k=2, B=B)
        return D.clone(), _signed(T, U).clone(), U.mT @ B @ U
    ok(program, rtol=1e-6)


def test_create_graph_gradient_of_the_gradient():
    def program(T):
        A = _spd(T, (6, 6)).requires_grad_()
        D, U = T.lobpcg(A, k=2, X=T.eye(6, 2, dtype=T.float64))
        U = _signed(T, U)
        (g,) = T.autograd.grad((D * D).sum() + U[0].sum(), A, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), A)
        return g.detach(), gg
    ok(program, rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda T, A, B: T.lobpcg(A, k=4),
    lambda T, A, B: T.lobpcg(T.zeros(3, 4)),
    lambda T, A, B: T.lobpcg(A, k=2, B=T.eye(6, dtype=T.float64)),
    lambda T, A, B: T.lobpcg(A, X=T.zeros(9, 4, dtype=T.float64)),
    lambda T, A, B: T.lobpcg(A.requires_grad_(), k=2, B=B)[0].sum().backward(),
])
def test_errors(call):
    same(lambda T: attempt(lambda: call(T, _spd(T, (9, 9)), 2 * T.eye(9, dtype=T.float64))))
