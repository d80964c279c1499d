"""The op table, one module per family; see ``_table`` for what a row holds."""
