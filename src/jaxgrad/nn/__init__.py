"""``jaxgrad.nn``: ``Module`` with torch's registration, state-dict and hook semantics,
``Parameter``, containers and simple layers.

>>> import jaxgrad
>>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(2, 2), jaxgrad.nn.ReLU())
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias']
"""

from . import functional as functional
from . import init as init
from . import modules as modules
from .modules import Flatten as Flatten
from .modules import Identity as Identity
from .modules import Linear as Linear
from .modules import LogSoftmax as LogSoftmax
from .modules import Module as Module
from .modules import ModuleDict as ModuleDict
from .modules import ModuleList as ModuleList
from .modules import ReLU as ReLU
from .modules import Sequential as Sequential
from .modules import Sigmoid as Sigmoid
from .modules import Softmax as Softmax
from .modules import Tanh as Tanh
from .parameter import Parameter as Parameter
