"""``jaxgrad.return_types``: the named tuples some ops return (torch's ``torch.return_types``).

>>> import jaxgrad
>>> jaxgrad.tensor([[1.0, 5.0]]).max(dim=1).indices
tensor([1])
"""

from ._core.return_types import aminmax as aminmax
from ._core.return_types import cummax as cummax
from ._core.return_types import cummin as cummin
from ._core.return_types import frexp as frexp
from ._core.return_types import geqrf as geqrf
from ._core.return_types import histogram as histogram
from ._core.return_types import histogramdd as histogramdd
from ._core.return_types import kthvalue as kthvalue
from ._core.return_types import linalg_cholesky_ex as linalg_cholesky_ex
from ._core.return_types import linalg_eig as linalg_eig
from ._core.return_types import linalg_eigh as linalg_eigh
from ._core.return_types import linalg_inv_ex as linalg_inv_ex
from ._core.return_types import linalg_ldl_factor as linalg_ldl_factor
from ._core.return_types import linalg_ldl_factor_ex as linalg_ldl_factor_ex
from ._core.return_types import linalg_lu as linalg_lu
from ._core.return_types import linalg_lu_factor as linalg_lu_factor
from ._core.return_types import linalg_lu_factor_ex as linalg_lu_factor_ex
from ._core.return_types import linalg_qr as linalg_qr
from ._core.return_types import linalg_slogdet as linalg_slogdet
from ._core.return_types import linalg_solve_ex as linalg_solve_ex
from ._core.return_types import linalg_svd as linalg_svd
from ._core.return_types import lu_unpack as lu_unpack
from ._core.return_types import max as max
from ._core.return_types import median as median
from ._core.return_types import min as min
from ._core.return_types import mode as mode
from ._core.return_types import nanmedian as nanmedian
from ._core.return_types import qr as qr
from ._core.return_types import slogdet as slogdet
from ._core.return_types import sort as sort
from ._core.return_types import svd as svd
from ._core.return_types import topk as topk
from ._core.return_types import triangular_solve as triangular_solve
