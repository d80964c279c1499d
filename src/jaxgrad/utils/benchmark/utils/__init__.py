"""``jaxgrad.utils.benchmark.utils``: where :class:`Timer` and :class:`Measurement` live, at
torch's paths.

>>> from jaxgrad.utils.benchmark.utils.common import Measurement
>>> Measurement.__module__
'jaxgrad.utils.benchmark.utils.common'
"""
