"""``jaxgrad.utils._pytree``: torch's pytrees (``torch.utils._pytree``), the flattening
``jaxgrad.func`` uses. None and tensors are leaves; register your own containers with
``register_pytree_node``.

>>> from jaxgrad.utils import _pytree as pytree
>>> leaves, spec = pytree.tree_flatten({"w": 1.0, "b": (2.0, None)})
>>> leaves
[1.0, 2.0, None]
>>> pytree.tree_unflatten([0, 0, 0], spec)
{'w': 0, 'b': (0, 0)}
"""

from .._func.torch_pytree import SUPPORTED_NODES as SUPPORTED_NODES
from .._func.torch_pytree import Context as Context
from .._func.torch_pytree import FlattenFn as FlattenFn
from .._func.torch_pytree import GetAttrKey as GetAttrKey
from .._func.torch_pytree import KeyEntry as KeyEntry
from .._func.torch_pytree import KeyPath as KeyPath
from .._func.torch_pytree import LeafSpec as LeafSpec
from .._func.torch_pytree import MappingKey as MappingKey
from .._func.torch_pytree import PyTree as PyTree
from .._func.torch_pytree import SequenceKey as SequenceKey
from .._func.torch_pytree import TreeSpec as TreeSpec
from .._func.torch_pytree import UnflattenFn as UnflattenFn
from .._func.torch_pytree import is_namedtuple as is_namedtuple
from .._func.torch_pytree import is_namedtuple_class as is_namedtuple_class
from .._func.torch_pytree import is_namedtuple_instance as is_namedtuple_instance
from .._func.torch_pytree import is_structseq as is_structseq
from .._func.torch_pytree import is_structseq_class as is_structseq_class
from .._func.torch_pytree import is_structseq_instance as is_structseq_instance
from .._func.torch_pytree import key_get as key_get
from .._func.torch_pytree import keystr as keystr
from .._func.torch_pytree import register_pytree_node as register_pytree_node
from .._func.torch_pytree import tree_all as tree_all
from .._func.torch_pytree import tree_all_only as tree_all_only
from .._func.torch_pytree import tree_any as tree_any
from .._func.torch_pytree import tree_any_only as tree_any_only
from .._func.torch_pytree import tree_flatten as tree_flatten
from .._func.torch_pytree import tree_flatten_with_path as tree_flatten_with_path
from .._func.torch_pytree import tree_is_leaf as tree_is_leaf
from .._func.torch_pytree import tree_iter as tree_iter
from .._func.torch_pytree import tree_leaves as tree_leaves
from .._func.torch_pytree import tree_leaves_with_path as tree_leaves_with_path
from .._func.torch_pytree import tree_map as tree_map
from .._func.torch_pytree import tree_map_ as tree_map_
from .._func.torch_pytree import tree_map_only as tree_map_only
from .._func.torch_pytree import tree_map_only_ as tree_map_only_
from .._func.torch_pytree import tree_map_with_path as tree_map_with_path
from .._func.torch_pytree import tree_structure as tree_structure
from .._func.torch_pytree import tree_unflatten as tree_unflatten
from .._func.torch_pytree import treespec_pprint as treespec_pprint
