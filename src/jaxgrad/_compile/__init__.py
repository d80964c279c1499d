"""Layer 4c: ``jaxgrad.compile``: a whole step traced into one XLA program."""
