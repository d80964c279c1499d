"""``torch.storage``: the storage classes a tensor's ``storage()`` / ``untyped_storage()``
return (views of jaxgrad's storage cells).

>>> import jaxgrad
>>> jaxgrad.storage.UntypedStorage is type(jaxgrad.arange(3.0).untyped_storage())
True
"""

from ._core.storage import TypedStorage as TypedStorage
from ._core.storage import UntypedStorage as UntypedStorage
