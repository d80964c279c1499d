"""``torch.testing``: comparing tensors in tests (``assert_close``) and making test inputs
(``make_tensor``).

>>> import jaxgrad
>>> jaxgrad.testing.assert_close(jaxgrad.tensor([0.1 + 0.2]), jaxgrad.tensor([0.3]))
"""

from ._comparison import assert_allclose as assert_allclose
from ._comparison import assert_close as assert_close
from ._creation import make_tensor as make_tensor
