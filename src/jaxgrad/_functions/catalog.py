"""Every declared op by name: importing this module imports every theme module, so that
``FUNCTIONS`` holds all of torch's top-level functions jaxgrad declares (``jaxgrad.exp``,
``jaxgrad.matmul``, ...) and ``opgen.DECLARED`` every op (methods and in-place forms too).

>>> from jaxgrad._functions.catalog import FUNCTIONS
>>> FUNCTIONS["exp"].__name__
'exp'
"""

from __future__ import annotations

from collections.abc import Callable

from . import (
          comparison,
          complex_numbers,
          copies,
          distance,
          einsum,
          indexing,
          integration,
          joins,
          linalg,
          linalg_decomp,
          linalg_dense,
          linalg_derived,
          linalg_householder,
          linalg_ldl,
          linalg_lu,
          linalg_products,
          linalg_triangular,
          pointwise,
          pointwise_bits,
          queries,
          reductions,
          scatter,
          shapes,
          sorting,
          special,
          spectral,
          spectral_stft,
          splits,
          statistics,
          windows,
)
from .opgen import DECLARED, FORMS

THEMES = (shapes, pointwise, pointwise_bits, reductions, joins, comparison, scatter, indexing,
          sorting, linalg, linalg_dense, linalg_triangular, linalg_decomp, linalg_lu,
          linalg_products, linalg_derived, linalg_householder, linalg_ldl, einsum,
          complex_numbers, copies, special, spectral, spectral_stft, distance, statistics,
          integration, queries, splits, windows)
FUNCTIONS: dict[str, Callable] = {name: FORMS[name] for name, decl in DECLARED.items()
                                  if "function" in decl.variants}
