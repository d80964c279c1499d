"""``jaxgrad.nn.utils``: gradient clipping, parameter/vector conversion and parametrizations,
as ``torch.nn.utils``.

>>> import jaxgrad
>>> p = jaxgrad.nn.Parameter(jaxgrad.ones(4))
>>> p.grad = jaxgrad.full((4,), 3.0)
>>> jaxgrad.nn.utils.clip_grad_norm_([p], max_norm=1.0)
tensor(6.)
"""

from . import parametrizations as parametrizations
from . import parametrize as parametrize
from . import rnn as rnn
from .clip_grad import clip_grad_norm_ as clip_grad_norm_
from .clip_grad import clip_grad_value_ as clip_grad_value_
from .clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import get_total_norm as get_total_norm
from .convert_parameters import parameters_to_vector as parameters_to_vector
from .convert_parameters import vector_to_parameters as vector_to_parameters
from .spectral_norm import remove_spectral_norm as remove_spectral_norm
from .spectral_norm import spectral_norm as spectral_norm
from .weight_norm import remove_weight_norm as remove_weight_norm
from .weight_norm import weight_norm as weight_norm
