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
from .._functions.linalg_decomp import linalg_eig as eig
from .._functions.linalg_decomp import linalg_eigh as eigh
from .._functions.linalg_decomp import linalg_eigvals as eigvals
from .._functions.linalg_decomp import linalg_eigvalsh as eigvalsh
from .._functions.linalg_decomp import linalg_householder_product as householder_product
from .._functions.linalg_decomp import linalg_lstsq as lstsq
from .._functions.linalg_decomp import linalg_matrix_exp as matrix_exp
from .._functions.linalg_decomp import linalg_matrix_power as matrix_power
from .._functions.linalg_decomp import linalg_pinv as pinv
from .._functions.linalg_decomp import linalg_qr as qr
from .._functions.linalg_decomp import linalg_svd as svd
from .._functions.linalg_decomp import linalg_svdvals as svdvals
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
from .._functions.linalg_derived import linalg_cond as cond
from .._functions.linalg_derived import linalg_matrix_rank as matrix_rank
from .._functions.linalg_derived import linalg_tensorinv as tensorinv
from .._functions.linalg_derived import linalg_tensorsolve as tensorsolve
from .._functions.linalg_derived import linalg_vander as vander
from .._functions.linalg_ldl import linalg_ldl_factor as ldl_factor
from .._functions.linalg_ldl import linalg_ldl_factor_ex as ldl_factor_ex
from .._functions.linalg_ldl import linalg_ldl_solve as ldl_solve
from .._functions.linalg_lu import linalg_lu as lu
from .._functions.linalg_lu import linalg_lu_factor as lu_factor
from .._functions.linalg_lu import linalg_lu_factor_ex as lu_factor_ex
from .._functions.linalg_lu import linalg_lu_solve as lu_solve
from .._functions.linalg_products import linalg_diagonal as diagonal
from .._functions.linalg_products import linalg_matmul as matmul
from .._functions.linalg_products import linalg_multi_dot as multi_dot
from .._functions.linalg_products import linalg_vecdot as vecdot
from .._functions.linalg_triangular import linalg_solve_triangular as solve_triangular

# their examples run with this module's doctests (the generated functions say "jaxgrad")
for _fn in (cross, matrix_norm, norm, vector_norm, cholesky, cholesky_ex, det, inv, inv_ex,
            slogdet, solve, solve_ex, solve_triangular, eig, eigh, eigvals, eigvalsh, matrix_exp,
            matrix_power, pinv, qr, svd, svdvals, lu, lu_factor, lu_factor_ex, lu_solve, cond,
            matrix_rank, tensorinv, tensorsolve, vander, diagonal, matmul, multi_dot, vecdot,
            lstsq, householder_product, ldl_factor, ldl_factor_ex, ldl_solve):
    public_path(__name__)(_fn)
del _fn

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
           "vecdot", "vector_norm"]
