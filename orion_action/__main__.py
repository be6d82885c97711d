"""`python -m orion_action`, the `orion-action` script and the action's step all start here
(`entry`): the credentials are moved out of the environment (a re-exec, ADR 0031) before the
heavy imports, so the image that is replaced has imported little.

Start-up CPU (issue 19, docs/adr/0074-start-up-cpu.md): the imports allocate some hundred
thousand objects, none of them garbage, and the cyclic collector would walk them again and
again, and once more at exit. It is off while they load; then they are frozen (moved out of
every later collection: they live as long as the process anyway) and it is on again before
any work is done.
"""

import gc
import sys


def entry() -> int:
    gc.disable()
    from orion_action.credentials import startup_env
    from orion_action.errors import OrionError

    try:
        startup_env(sys.orig_argv[1:])
    except OrionError as exc:
        print(f"orion-action: error: {exc}", file=sys.stderr, flush=True)
        return int(exc.exit_code)
    from orion_action.cli import main  # after the re-exec: the heavy imports (adapters, PyGithub)

    gc.freeze()
    gc.enable()
    return main()


if __name__ == "__main__":
    sys.exit(entry())
