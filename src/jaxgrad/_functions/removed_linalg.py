"""torch's linear-algebra functions removed in 1.9, kept only to say what replaces them:
``eig``, ``lstsq``, ``solve``, ``symeig``, ``matrix_rank`` (and the methods ``Tensor.eig``,
``lstsq``, ``solve``, ``symeig``) raise torch's RuntimeError, naming the ``linalg`` function.

>>> import jaxgrad
>>> try:
...     jaxgrad.solve(jaxgrad.eye(2), jaxgrad.eye(2))
... except RuntimeError as e:
...     print(str(e).splitlines()[-1])
X = jaxgrad.linalg.solve(A, B)
"""

from __future__ import annotations

from typing import Any

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def matrix_rank(input: Any, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Any:
    """Removed: raises, pointing to ``jaxgrad.linalg.matrix_rank``.

    >>> import jaxgrad
    >>> jaxgrad.matrix_rank(jaxgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed.
    Please use the `jaxgrad.linalg.matrix_rank` function instead. ...
    """
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `jaxgrad.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `jaxgrad.linalg.matrix_rank()` to 'hermitian'."
    )


def solve(input: Any, A: Any, *, out: Any = None) -> Any:
    """Removed: raises, pointing to ``jaxgrad.linalg.solve`` (arguments reversed).

    >>> import jaxgrad
    >>> jaxgrad.solve(jaxgrad.eye(2), jaxgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        f"{_REMOVED} `jaxgrad.solve` is deprecated in favor of `jaxgrad.linalg.solve`. "
        "`jaxgrad.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `jaxgrad.lu`, which can be used with "
        "`jaxgrad.lu_solve` or `jaxgrad.lu_unpack`.\nX = jaxgrad.solve(B, A).solution should be "
        "replaced with:\nX = jaxgrad.linalg.solve(A, B)"
    )


def lstsq(input: Any, A: Any, *, out: Any = None) -> Any:
    """Removed: raises, pointing to ``jaxgrad.linalg.lstsq`` (arguments reversed).

    >>> import jaxgrad
    >>> jaxgrad.lstsq(jaxgrad.eye(2), jaxgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        f"{_REMOVED} `jaxgrad.lstsq` is deprecated in favor of `jaxgrad.linalg.lstsq`.\n"
        "`jaxgrad.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `jaxgrad.linalg.qr`.\n\n"
        "The returned solution in `jaxgrad.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In jaxgrad.linalg.lstsq, the "
        "residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = jaxgrad.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = jaxgrad.linalg.lstsq(A, B).solution"
    )


def symeig(input: Any, eigenvectors: bool = False, upper: bool = True, *, out: Any = None) -> Any:
    """Removed: raises, pointing to ``jaxgrad.linalg.eigvalsh``/``eigh``.

    >>> import jaxgrad
    >>> jaxgrad.symeig(jaxgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion of "
        "the matrix by default to using the lower triangular portion.\n\n"
        "L, _ = jaxgrad.symeig(A, upper=upper) should be replaced with:\n"
        "L = jaxgrad.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = jaxgrad.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = jaxgrad.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


def eig(self: Any, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> Any:
    """Removed: raises, pointing to ``jaxgrad.linalg.eigvals``/``eig`` (complex results).

    >>> import jaxgrad
    >>> jaxgrad.eig(jaxgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        f"{_REMOVED} `jaxgrad.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\n"
        "L, _ = jaxgrad.eig(A) should be replaced with:\nL_complex = jaxgrad.linalg.eigvals(A)"
        "\n\nand\n\nL, V = jaxgrad.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = jaxgrad.linalg.eig(A)"
    )


# Tensor.solve(A), .lstsq(A), .eig(), .symeig(): the same refusals (no Tensor.matrix_rank)
METHODS: dict[str, Any] = {"eig": eig, "lstsq": lstsq, "solve": solve, "symeig": symeig}
