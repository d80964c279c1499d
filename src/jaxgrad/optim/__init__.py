"""``jaxgrad.optim``: torch.optim's optimizers (SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta,
Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS), LR schedulers (``lr_scheduler``) and weight
averaging (``swa_utils``).

>>> import jaxgrad
>>> w = jaxgrad.tensor([3.0], requires_grad=True)
>>> opt = jaxgrad.optim.SGD([w], lr=0.25)
>>> (w * w).sum().backward(); opt.step(); w
tensor([1.5000], requires_grad=True)
"""

from . import lr_scheduler as lr_scheduler
from . import swa_utils as swa_utils
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
