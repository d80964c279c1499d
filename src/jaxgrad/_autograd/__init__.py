"""Layer 4b: ``autograd.Function``, ``autograd.functional``, gradcheck (and ``lobpcg``, built on
them)."""
