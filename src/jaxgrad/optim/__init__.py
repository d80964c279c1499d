"""``jaxgrad.optim``: torch.optim's optimizers (SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta,
Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS, Adafactor, Muon, SparseAdam), LR schedulers
(``lr_scheduler``), weight averaging (``swa_utils``) and ``swap_in_optimizer_params_and_state``.

>>> import jaxgrad
>>> w = jaxgrad.tensor([3.0], requires_grad=True)
>>> opt = jaxgrad.optim.SGD([w], lr=0.25)
>>> (w * w).sum().backward(); opt.step(); w
tensor([1.5000], requires_grad=True)
"""

from . import lr_scheduler as lr_scheduler
from . import swa_utils as swa_utils
from ._adafactor import Adafactor as Adafactor
from ._muon import Muon as Muon
from ._stateless import swap_in_optimizer_params_and_state as swap_in_optimizer_params_and_state
from .adadelta import Adadelta as Adadelta
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamax import Adamax as Adamax
from .adamw import AdamW as AdamW
from .asgd import ASGD as ASGD
from .lbfgs import LBFGS as LBFGS
from .nadam import NAdam as NAdam
from .optimizer import Optimizer as Optimizer
from .radam import RAdam as RAdam
from .rmsprop import RMSprop as RMSprop
from .rprop import Rprop as Rprop
from .sgd import SGD as SGD
from .sparse_adam import SparseAdam as SparseAdam

Adafactor.__module__ = "jaxgrad.optim"
Muon.__module__ = "jaxgrad.optim"
swap_in_optimizer_params_and_state.__module__ = "jaxgrad.optim"
