"""One module per ``python -m training`` subcommand group: each adds its parsers
(``add_parsers``) and runs them (``run``), so ``training/__main__.py`` only dispatches."""
