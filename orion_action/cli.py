"""The command line: parse, build adapters, call a service, map errors to exit codes.

Every command takes `--config PATH` and `--repo OWNER/NAME` after its name (`run --next`,
`reconcile` and `status` take several: services/fleet.py). Errors are one
line on stderr (`orion-action: error: ...`) and a documented exit code (docs/design.md section 9);
anything else that escapes is a bug, and still one line (`orion-action: internal error: ...`,
exit 70; the traceback only with `--verbose`: docs/adr/0036-bad-input-is-one-line.md).
"""

from __future__ import annotations

import argparse
import sys
import threading
import traceback
from collections.abc import Sequence

from orion_action import __version__, credentials
from orion_action.adapters.github import DEFAULT_API_URL, AppCredentials, GitHubRepo
from orion_action.config import LABEL_MAX, LOGIN, UNSEEN, Config, load_config
from orion_action.errors import ExitCode, OrionError, UsageError

DEFAULT_RETRY_FOR = 60.0  # seconds a transient GitHub failure is retried before exit 69
# Environment variables whose values never appear in what orion prints, even in a traceback.
SECRET_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN", "ORION_APP_PRIVATE_KEY", "ORION_RECORD_KEY")

# The help's epilog: what every command reads from its environment, and what its exit codes
# mean (docs/commands.md has the full table; a test keeps both in step with ExitCode).
ENVIRONMENT = """environment:
  GITHUB_TOKEN             a token with issues: write (or a GitHub App: ORION_APP_ID,
                           ORION_APP_PRIVATE_KEY, optionally ORION_APP_INSTALLATION_ID)
  GITHUB_REPOSITORY        OWNER/NAME, unless --repo
  GITHUB_API_URL           default https://api.github.com (GitHub Enterprise: its API URL)
  ORION_API_RETRY_SECONDS  how long transient GitHub failures are retried (default 60)"""
HELP_EXIT_CODES = """exit codes:
  0      success
  N      run: the command's own code when it failed (128+N: killed by signal N)
  64     usage or configuration error, bad or missing token, an issue that does not exist
  69     GitHub unreachable after retries, or an answer orion cannot use
  70     an unexpected internal error (one line; the traceback with --verbose)
  75     nothing claimed (not queued, held, lost the race, empty or paused queue, refused)
  76     the claim was lost while running, or cancelled, and the command was stopped
  124    run: run.timeout or run.idle_timeout stopped the command
  127    run: the command could not be started
  128+N  run: stopped by signal N (a cancelled job); cancelled, or requeued (run.on_signal)
The full reference: docs/commands.md and docs/configuration.md in orion-action's repository."""
EPILOG = f"{ENVIRONMENT}\n\n{HELP_EXIT_CODES}"


class _Parser(argparse.ArgumentParser):
    """argparse that exits 64 (usage), not 2, with a one-line error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith("argument command: invalid choice") or message.endswith("required: command"):
            # Most often an option put before the command (`orion-action --repo X status`).
            message += "; the command comes first and its options after it, e.g. " \
                       "orion-action status --repo OWNER/NAME"
        sys.stderr.write(
            f"orion-action: error: {message} (see {self.prog} --help)\n"
        )
        sys.exit(int(ExitCode.USAGE))


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps a description to the terminal, keeps an epilog's own lines (its tables)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


# --quiet: `_log` prints nothing (errors, which main prints itself, and the command's own
# output still appear). Reset by every build_parser(), so one main() never quiets the next.
_QUIET = {"on": False}


class _QuietAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        _QUIET["on"] = True


def _log(message: str) -> None:
    if not _QUIET["on"]:
        print(f"orion-action: {message}", file=sys.stderr, flush=True)


def _common(p: argparse.ArgumentParser) -> None:
    # also after the command name; SUPPRESS keeps a top-level --verbose from being reset
    p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP)
    p.add_argument(
        "--config", metavar="PATH", help="configuration file (default: .github/orion.yml if present)"
    )
    p.add_argument(
        "--repo",
        action="append",
        metavar="OWNER/NAME",
        help="repository (default: $GITHUB_REPOSITORY); run --next, reconcile and status take several",
    )
    p.add_argument("-q", "--quiet", action=_QuietAction, nargs=0,
                   help="print errors only: no progress or request-count lines")


VERBOSE_HELP = "on an internal error (exit 70), print the traceback too"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="orion-action",
        description="GitHub issues as a safe work queue.",
        epilog=EPILOG,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"orion-action {__version__}")
    parser.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _QUIET["on"] = False

    run = sub.add_parser(
        "run",
        help="claim an issue, run a command, heartbeat, finish",
        description="Claim an issue (--issue N, or the first queued one with --next), run CMD as a "
        "child while heartbeating on the issue, and move the labels when it ends. CMD gets "
        "ORION_ISSUE, ORION_REPO, ORION_ISSUE_FILE (the issue's text, as JSON), ORION_PROGRESS_FILE, "
        "ORION_ATTEMPT, ORION_STAGE and ORION_CLAIM_TOKEN.",
        epilog=EPILOG, formatter_class=_HelpFormatter,
    )
    _common(run)
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--issue", type=_issue_number, metavar="N", help="the issue to claim")
    which.add_argument(
        "--next", action="store_true", help="claim the first queued issue (priority label, then oldest)"
    )
    run.add_argument(
        "--require",
        action="append",
        metavar="LABEL",
        type=_label_name,
        help="with --next: consider only queued issues carrying LABEL (repeatable: every one)",
    )
    run.add_argument("--stage", metavar="S", type=_stage_name, help="show orion-stage-S while held")
    run.add_argument(
        "--actor",
        metavar="LOGIN",
        type=_login,
        help="who added the label that started this run (saves nothing but a log line: every "
        "claim asks GitHub who last added the queue label and checks their trigger.permission)",
    )
    run.add_argument(
        "--drain", action="store_true", help="with --next: run queued issues one by one until none is left"
    )
    run.add_argument("--max-runs", type=_positive, metavar="K", help="with --drain: stop after K runs")
    run.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")

    rec = sub.add_parser(
        "reconcile", help="one reconcile pass over every issue carrying the lock",
        description="One repair pass over every issue carrying the lock: requeue claims whose holder "
        "is provably dead, move finished runs' labels, unlock closed issues, carry out cancel labels; "
        "report anything uncertain and leave it alone. With dispatch.workflow, start worker runs.",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(rec)
    rec.add_argument("--dry-run", action="store_true", help="write nothing; print the plan")
    rec.add_argument("--json", action="store_true", help="print the plan as JSON")

    st = sub.add_parser(
        "status", help="every issue carrying the lock, with its verdict",
        description="Every issue carrying the lock with its liveness verdict, and the queue in pick "
        "order; writes nothing.",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(st)
    st.add_argument("--json", action="store_true", help="print JSON")

    rel = sub.add_parser(
        "release", help="release a claim by hand",
        description="Release issue N's claim by hand and put the issue back in the queue; refuses a "
        "holder judged alive unless --force (that run stops at its next heartbeat). A lock no orion run "
        "ever claimed, on an issue without the queue label, only comes off: nobody queued it.",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(rel)
    rel.add_argument("--issue", type=_issue_number, metavar="N", required=True, help="the issue to release")
    rel.add_argument("--force", action="store_true", help="release even a holder judged alive")

    init = sub.add_parser(
        "init", help="create or update the labels",
        description="Create or update every label the configuration names (queue, working, ready, "
        "failed, cancel, priority) and, with dashboard.enabled, the dashboard issue; safe to run "
        "again, and a paused queue stays paused.",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(init)

    pause = sub.add_parser(
        "pause", help="pause the queue: runs claim nothing until resume",
        description="Pause the queue: every run claims nothing (exit 75) until resume; runs in flight "
        "go on. The switch is the queue label's description, so a person can flip it on GitHub too.",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(pause)
    pause.add_argument("--reason", metavar="TEXT", help="why; shown by run, status and on GitHub")
    resume = sub.add_parser(
        "resume", help="resume a paused queue",
        description="Resume a paused queue (nothing to do, exit 0, when it is not paused).",
        epilog=EPILOG, formatter_class=_HelpFormatter)
    _common(resume)
    return parser


def _label_name(text: str) -> str:
    if not text.strip() or "," in text or len(text) > LABEL_MAX or UNSEEN.search(text):
        raise argparse.ArgumentTypeError(
            f"a label name has no commas, no control characters and 1-{LABEL_MAX} characters, got {text!r}"
        )
    return text


def _login(text: str) -> str:
    """A GitHub login: an empty or malformed one would skip or defeat the trigger check."""
    if not LOGIN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a GitHub login, got {text!r}")
    return text


def _issue_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"issue number must be a positive whole number, got {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def _stage_name(text: str) -> str:
    if not text or len(text) > 40 or not all(ch.isalnum() or ch in "-_." for ch in text):
        raise argparse.ArgumentTypeError(f"stage must be 1-40 letters, digits, '-', '_' or '.', got {text!r}")
    return text


SEVERAL_REPOS = ("reconcile", "status")  # and `run --next`


def _repo_names(args: argparse.Namespace, env: dict[str, str]) -> list[str]:
    """The repositories named by --repo (in order), else $GITHUB_REPOSITORY; several only
    where the command takes several."""
    names = list(args.repo or [])
    if not names:
        repo = env.get("GITHUB_REPOSITORY", "")
        if not repo:
            raise UsageError("no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY")
        return [repo]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--repo {twice[0]} is given more than once")
    if len(names) > 1:
        if args.command == "run" and not args.next:
            raise UsageError("run --issue N takes one --repo: the issue number belongs to one repository")
        if args.command != "run" and args.command not in SEVERAL_REPOS:
            raise UsageError(f"{args.command} takes one --repo (several: run --next, reconcile, status)")
    return names


def _connect(args: argparse.Namespace, env: dict[str, str], trusted: tuple[str, ...]) -> list[GitHubRepo]:
    """One adapter per repository: each has its own request counter, budget, login and
    trusted set; the token (or App) is the same."""
    names = _repo_names(args, env)
    app = _app_credentials(env)
    token = "" if app else env.get("GITHUB_TOKEN", "")
    if env.get("GITHUB_ACTIONS") == "true":  # secrets from elsewhere than `secrets.` are not masked
        secrets = [token] if token else []
        secrets += [env["ORION_RECORD_KEY"]] if env.get("ORION_RECORD_KEY") else []
        if app:  # a workflow command is one line: mask the key line by line
            secrets = [line.strip() for line in app.private_key.replace("\\n", "\n").splitlines()]
        for secret in secrets:
            if secret and not secret.startswith("-----"):
                print(f"::add-mask::{secret}", flush=True)
    retry_for = env.get("ORION_API_RETRY_SECONDS", "")
    try:
        budget = float(retry_for) if retry_for else DEFAULT_RETRY_FOR
    except ValueError:
        budget = -1.0
    if not 0 < budget <= 3600:
        raise UsageError(
            f"ORION_API_RETRY_SECONDS must be a number of seconds in (0, 3600], got {retry_for!r}"
        )
    api_url = env.get("GITHUB_API_URL") or DEFAULT_API_URL
    key = _record_key(env)
    repos = [
        GitHubRepo(name, token, api_url, app=app, retry_for=budget, record_key=key, trusted_logins=trusted)
        for name in names
    ]
    for repo in repos:  # a wait for GitHub is never silent (up to ORION_API_RETRY_SECONDS)
        repo.on_retry = _log
    return repos


RECORD_KEY_MIN = 32  # characters: a random secret, e.g. `openssl rand -hex 32`


def _record_key(env: dict[str, str]) -> bytes | None:
    """ORION_RECORD_KEY (the action's `record-key` input): every record orion writes is sealed
    with it and only sealed records are believed (docs/adr/0035). Unset or empty: none."""
    key = env.get("ORION_RECORD_KEY", "")
    if not key:
        return None
    if len(key) < RECORD_KEY_MIN or not key.isprintable() or key != key.strip():
        raise UsageError(
            f"ORION_RECORD_KEY must be a secret of at least {RECORD_KEY_MIN} printable characters "
            f"without surrounding white space (e.g. the output of `openssl rand -hex 32`)"
        )
    return key.encode()


def _app_credentials(env: dict[str, str]) -> AppCredentials | None:
    """A GitHub App from ORION_APP_ID, ORION_APP_PRIVATE_KEY and ORION_APP_INSTALLATION_ID (if
    absent, looked up by repository); None when neither of the first two is set."""
    app_id, key = env.get("ORION_APP_ID", "").strip(), env.get("ORION_APP_PRIVATE_KEY", "")
    installation = env.get("ORION_APP_INSTALLATION_ID", "").strip()
    if not app_id and not key.strip():
        return None
    if not app_id or not key.strip():
        missing = "ORION_APP_PRIVATE_KEY" if app_id else "ORION_APP_ID"
        raise UsageError(f"{missing} is not set: a GitHub App needs ORION_APP_ID and ORION_APP_PRIVATE_KEY")
    if installation and not (installation.isascii() and installation.isdigit()):
        raise UsageError(f"ORION_APP_INSTALLATION_ID must be a number, got {installation!r}")
    return AppCredentials(app_id, key, int(installation) if installation else None)


def _command_line(args: argparse.Namespace) -> list[str]:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no command to run: put it after --, e.g. orion-action run --next -- ./work.sh")
    return cmd


def dispatch(args: argparse.Namespace, config: Config, env: dict[str, str]) -> int:
    """The composition root: the one place that builds adapters and hands them to services,
    then their results to the report layer (docs/adr/0051-ports-only.md)."""
    from orion_action.adapters import child, machine
    from orion_action.adapters.actions import ActionsRunner
    from orion_action.adapters.clock import SYSTEM_CLOCK
    from orion_action.ports import Host
    from orion_action.services import trigger, wrapper

    runner = ActionsRunner(env)
    if args.command == "run":
        if args.drain and not args.next:
            raise UsageError("--drain works with --next only")
        if args.max_runs is not None and not args.drain:
            raise UsageError("--max-runs works with --drain only")
        cmd = _command_line(args)
        stage = config.labels.stage(args.stage)
        if stage and len(stage) > LABEL_MAX:
            raise UsageError(
                f"--stage {args.stage}: the label {stage!r} would be {len(stage)} characters; "
                f"GitHub allows {LABEL_MAX}"
            )
        if args.require and args.issue is not None:
            raise UsageError("--require goes with --next: with --issue N the issue is already chosen")
        repos = _connect(args, env, config.trusted_authors)
        trigger.check_actor_argument(args.actor)
        if len(repos) > 1 and args.actor:
            raise UsageError("--actor goes with one --repo: the label was added in one repository")
        host = Host(SYSTEM_CLOCK, machine, child, runner)
        # The wrapper gives the command no credential (credentials.command_env).
        w = wrapper.Wrapper(repos, config, _log, env, host)
        w.actor = args.actor  # every claim checks who queued the issue (services/trigger.py)
        request = wrapper.RunRequest(
            command=cmd, issue=args.issue, stage=args.stage, require=tuple(args.require or ())
        )
        if args.drain:
            return w.drain(request, args.max_runs)
        return w.run(request)
    # Not before: `run` uses neither, and they cost it about 4 % of its CPU to import (the
    # report layer pulls in reconcile and the dashboard; issue 19, ADR 0074).
    from orion_action import report
    from orion_action.services import reconcile

    repos = _connect(args, env, config.trusted_authors)
    here = machine.this_machine()
    if args.command == "reconcile":
        passes = reconcile.reconcile_repos(repos, config, _log, here, machine.sight, dry_run=args.dry_run,
                                           runner=runner)
        return report.reconcile(passes, config, _log, runner, dry_run=args.dry_run, as_json=args.json)
    if args.command == "status":
        url = runner.server_url if runner.has_summary() else None
        found = reconcile.status_repos(repos, config, _log, here, machine.sight, summary_url=url)
        return report.status(found, config, _log, runner, as_json=args.json)
    gh = repos[0]
    if args.command == "release":
        plan = reconcile.release(gh, config, _log, here, machine.sight, args.issue, force=args.force)
        return report.release(plan, config, args.issue)
    if args.command in ("pause", "resume"):
        from orion_action.services import pause

        if args.command == "pause":
            return report.lines(pause.pause_command(gh, config, _log, args.reason))
        return report.lines(pause.resume_command(gh, config, _log))
    if args.command == "init":
        from orion_action.services import setup

        return report.lines(setup.init_command(gh, config, _log))
    raise UsageError(f"unknown command {args.command!r}")  # pragma: no cover


def main(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> int:
    """The entry point. Without `env` (a real process): credentials found in the process's
    environment are first moved out of it by a re-exec (credentials.startup_env, ADR 0031)."""
    if env is None:
        try:
            env = credentials.startup_env(sys.orig_argv[1:])
        except OrionError as exc:
            print(f"orion-action: error: {exc}", file=sys.stderr, flush=True)
            return int(exc.exit_code)
    env = dict(env)
    args = build_parser().parse_args(argv)
    hook = threading.excepthook  # a thread's crash (the heartbeat's) is one line too
    threading.excepthook = lambda crash: _internal_error(crash.exc_value, args.verbose, env, crash.thread)
    try:
        code = _main(args, env)
    finally:
        threading.excepthook = hook
    # The composite action execs this process, so it sets the step's exit-code output itself.
    from orion_action.adapters.actions import ActionsRunner

    ActionsRunner(env).set_outputs({"exit-code": str(code)})
    return code


def _main(args: argparse.Namespace, env: dict[str, str]) -> int:
    try:
        config = load_config(args.config)
        return dispatch(args, config, env)
    except OrionError as exc:
        from orion_action import report
        from orion_action.adapters.actions import ActionsRunner
        from orion_action.config import DEFAULT_PATH

        report.error(exc, str(args.config or DEFAULT_PATH), ActionsRunner(env))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, or input no check foresaw: still one line and a documented code
        _internal_error(exc, args.verbose, env)
        return int(ExitCode.INTERNAL)


def _internal_error(
    exc: BaseException | None, verbose: bool, env: dict[str, str], thread: threading.Thread | None = None
) -> None:
    """One line naming the exception (the traceback before it with --verbose), with every
    secret of the environment blotted out: an exception's text may quote anything."""
    if exc is None or isinstance(exc, SystemExit):  # a thread's sys.exit() is no error (as by default)
        return
    secrets = [
        line.strip()
        for name in SECRET_VARIABLES
        for line in env.get(name, "").replace("\\n", "\n").splitlines()
        if len(line.strip()) >= 8 and not line.strip().startswith("-----")
    ]

    def redact(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    if verbose:
        sys.stderr.write(redact("".join(traceback.format_exception(exc))))
    what = "".join(ch if ch.isprintable() else " " for ch in redact(str(exc)))  # redacted before cut
    what = " ".join(what.split())[:300]
    where = f" in thread {thread.name}" if thread is not None else ""
    hint = "" if verbose else " (orion-action --verbose ... prints the traceback)"
    line = f"orion-action: internal error{where}: {type(exc).__name__}{': ' + what if what else ''}{hint}"
    print(line, file=sys.stderr, flush=True)
