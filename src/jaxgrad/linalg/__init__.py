"""``jaxgrad.linalg``: torch.linalg's norms.

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

# their examples run with this module's doctests (the generated functions say "jaxgrad")
for _fn in (cross, matrix_norm, norm, vector_norm):
    public_path(__name__)(_fn)
del _fn

__all__ = ["cross", "matrix_norm", "norm", "vector_norm"]
