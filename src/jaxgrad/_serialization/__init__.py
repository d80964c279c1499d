"""Layer 4d: ``jaxgrad.save``/``load`` in torch's checkpoint format."""
