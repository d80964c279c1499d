"""``jaxgrad.linalg``: torch.linalg's norms, inverse, determinants, solvers, Cholesky and
the decompositions.

``vector_norm``, ``matrix_norm`` and ``norm`` are declared with torch's schemas
(``linalg_vector_norm(...)``), so their argument errors name them as torch does; they compose
exactly as torch composes them (``matrix_norm(A, 1)`` is ``amax`` of a ``vector_norm``).

>>> import jaxgrad
>>> A = jaxgrad.tensor([[1.0, -2.0], [2.0, 4.0]], requires_grad=True)
>>> jaxgrad.linalg.vector_norm(A)
tensor(5., grad_fn=<LinalgVectorNormBackward0>)
"""

from .._core.typename import public_path
from .._functions.linalg import linalg_cross as cross
from .._functions.linalg import linalg_matrix_norm as matrix_norm
from .._functions.linalg import linalg_norm as norm
from .._functions.linalg import linalg_vector_norm as vector_norm
from .._functions.linalg_dense import _LinAlgError as LinAlgError
from .._functions.linalg_dense import _LinAlgError as _LinAlgError  # (its printed path)
from .._functions.linalg_dense import linalg_cholesky as cholesky
from .._functions.linalg_dense import linalg_cholesky_ex as cholesky_ex
from .._functions.linalg_dense import linalg_det as det
from .._functions.linalg_dense import linalg_inv as inv
from .._functions.linalg_dense import linalg_inv_ex as inv_ex
from .._functions.linalg_dense import linalg_slogdet as slogdet
from .._functions.linalg_dense import linalg_solve as solve
from .._functions.linalg_dense import linalg_solve_ex as solve_ex
from .._functions.linalg_triangular import linalg_solve_triangular as solve_triangular

# their examples run with this module's doctests (the generated functions say "jaxgrad")
for _fn in (cross, matrix_norm, norm, vector_norm, cholesky, cholesky_ex, det, inv, inv_ex,
            slogdet, solve, solve_ex, solve_triangular):
    public_path(__name__)(_fn)
del _fn

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "inv", "inv_ex",
           "matrix_norm", "norm", "slogdet", "solve", "solve_ex", "solve_triangular", "vector_norm"]
