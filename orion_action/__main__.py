"""`python -m orion_action` is the same as the `orion-action` script."""

import sys

from orion_action.cli import main

sys.exit(main())
