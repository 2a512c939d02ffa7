"""Pure lexical search: normalising, analysing, ranking and quoting text."""
