"""``jaxgrad.nn.functional`` by theme (the public module re-exports every function)."""
