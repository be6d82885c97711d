"""`python -m orion_action` is the same as the `orion-action` script."""

import sys

from orion_action.credentials import startup_env
from orion_action.errors import OrionError

try:  # before importing the CLI: the re-exec that moves credentials out of the environment is cheap
    startup_env(sys.orig_argv[1:])
except OrionError as exc:
    print(f"orion-action: error: {exc}", file=sys.stderr, flush=True)
    sys.exit(int(exc.exit_code))

from orion_action.cli import main  # noqa: E402

sys.exit(main())
