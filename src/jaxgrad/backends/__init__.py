"""``jaxgrad.backends``: torch's backend switches and availability answers, at torch's paths.

Programs written for torch set these (``torch.backends.cudnn.benchmark = True``) and read them
back; jaxgrad's kernels are compiled by XLA, which makes these choices itself, so the flags are
stored and read back only (each module says so). Availability answers as torch's CPU build does
where JAX has no GPU.

>>> import jaxgrad
>>> jaxgrad.backends.cudnn.is_available() == jaxgrad.cuda.is_available()
True
>>> jaxgrad.backends.mps.is_available(), jaxgrad.backends.mkldnn.is_available()
(False, True)
"""

from . import cuda as cuda
from . import cudnn as cudnn
from . import mha as mha
from . import mkldnn as mkldnn
from . import mps as mps
from . import opt_einsum as opt_einsum
