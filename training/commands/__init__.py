"""One module per ``python -m training`` subcommand group: each adds its parsers
(``add_parsers``) and runs them (``run``), so ``training/__main__.py`` only dispatches."""

import sys


def usage_error(command: str, message: str) -> int:
    """What argparse does for a bad command line: the message on stderr, exit status 2."""
    print(f"python -m training {command}: error: {message}", file=sys.stderr)
    return 2
