"""``torch.autograd.graph``: the Node type that every ``grad_fn`` is an instance of."""

from .._graph import Node as Node
