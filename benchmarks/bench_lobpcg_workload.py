"""The workload of PyTorch's ``test_autograd.py::test_lobpcg``, timed on torch or on jaxgrad:
``gradcheck`` and ``gradgradcheck`` of lobpcg's k extreme eigenpairs (each eigenvector's sign
fixed by its largest entry), then a backward whose gradient must be symmetric, for k = 1, 2, 3
on 6x6, 6x6 and 9x9 matrices with no, one and two batch dimensions, largest and smallest.

Every new shape compiles (or, with a warm kernel cache, loads) jaxgrad's kernels, so this is
a measure of new-shape latency more than of steady-state speed. Run each library in its own
process, the kernel cache cold or warm as wanted:

    PYTHONPATH=src python benchmarks/bench_lobpcg_workload.py jaxgrad
    JAXGRAD_KERNEL_CACHE_DIR=$(mktemp -d) PYTHONPATH=src python benchmarks/bench_lobpcg_workload.py jaxgrad
    python benchmarks/bench_lobpcg_workload.py torch
"""

from __future__ import annotations

import importlib
import sys
import time

CASES = [(k, (*batch, n, n)) for k, n in ((1, 6), (2, 6), (3, 9)) for batch in ((), (2,), (2, 2))]


def eigenpairs(lib, k: int, A, largest: bool):
    """lobpcg's (values, vectors) from the identity's first k columns, signs made definite."""
    X = lib.eye(A.size(-2), k, dtype=A.dtype)
    if A.dim() > 2:
        X = X.expand(*A.shape[:-1], k)
    D, U = lib.lobpcg(A=A, k=k, X=X, largest=largest)
    _, where = U.abs().max(-2, keepdim=True)
    return D, U * U.gather(-2, where).sign()


def check(lib, k: int, size: tuple, largest: bool) -> None:
    autograd = importlib.import_module(f"{lib.__name__}.autograd")
    A = lib.rand(*size).double()
    A = ((A @ A.mT) / 10).requires_grad_(True)
    fn = lambda A: eigenpairs(lib, k, A, largest)
    assert autograd.gradcheck(fn, A, check_batched_grad=False)
    vector_grads = [lib.rand(*A.shape[:-2], k) / 100, lib.rand(*A.shape[:-1], k) / 100]
    assert autograd.gradgradcheck(fn, A, vector_grads, atol=1e-4, check_batched_grad=False)
    A = A.detach().requires_grad_(True)
    D, U = fn(A)
    (D.sum() + U.sum()).backward()
    assert lib.allclose(A.grad, A.grad.mT)


def main() -> None:
    lib = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "jaxgrad")
    lib.manual_seed(0)
    start = time.perf_counter()
    for largest in (True, False):
        for k, size in CASES:
            t = time.perf_counter()
            try:
                check(lib, k, size, largest)
                failed = ""
            except Exception as error:  # (torch's own lobpcg fails some draws: timed anyway)
                failed = f"  check failed: {type(error).__name__}"
            print(f"largest={largest!s:5} k={k} size={size}: {time.perf_counter() - t:6.2f} s"
                  f"{failed}", flush=True)
    print(f"{lib.__name__}: total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
