"""The command line: parse, build adapters, call a service, map errors to exit codes.

Every command takes `--config PATH` and `--repo OWNER/NAME` after its name (`run --next`,
`reconcile` and `status` take several: services/fleet.py). Errors are one
line on stderr (`orion-action: error: ...`) and a documented exit code (docs/design.md section 9).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from orion_action import __version__
from orion_action.adapters.github import DEFAULT_API_URL, AppCredentials, GitHubRepo
from orion_action.config import LABEL_MAX, Config, load_config
from orion_action.errors import ExitCode, OrionError, UsageError

DEFAULT_RETRY_FOR = 60.0  # seconds a transient GitHub failure is retried before exit 69


class _Parser(argparse.ArgumentParser):
    """argparse that exits 64 (usage), not 2, with a one-line error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(
            f"orion-action: error: {message} (see orion-action {self.prog.split()[-1]} --help)\n"
        )
        sys.exit(int(ExitCode.USAGE))


def _log(message: str) -> None:
    print(f"orion-action: {message}", file=sys.stderr, flush=True)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", metavar="PATH", help="configuration file (default: .github/orion.yml if present)"
    )
    p.add_argument(
        "--repo",
        action="append",
        metavar="OWNER/NAME",
        help="repository (default: $GITHUB_REPOSITORY); run --next, reconcile and status take several",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="orion-action", description="GitHub issues as a safe work queue.")
    parser.add_argument("--version", action="version", version=f"orion-action {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser(
        "run",
        help="claim an issue, run a command, heartbeat, finish",
        description="Claim an issue, run CMD as a child, heartbeat, finish.",
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
        help="who added the label that started this run (saves nothing but a log line: every "
        "claim asks GitHub who last added the queue label and checks their trigger.permission)",
    )
    run.add_argument(
        "--drain", action="store_true", help="with --next: run queued issues one by one until none is left"
    )
    run.add_argument("--max-runs", type=_positive, metavar="K", help="with --drain: stop after K runs")
    run.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")

    rec = sub.add_parser("reconcile", help="one reconcile pass over every issue carrying the lock")
    _common(rec)
    rec.add_argument("--dry-run", action="store_true", help="write nothing; print the plan")
    rec.add_argument("--json", action="store_true", help="print the plan as JSON")

    st = sub.add_parser("status", help="every issue carrying the lock, with its verdict")
    _common(st)
    st.add_argument("--json", action="store_true", help="print JSON")

    rel = sub.add_parser("release", help="release a claim by hand")
    _common(rel)
    rel.add_argument("--issue", type=_issue_number, metavar="N", required=True)
    rel.add_argument("--force", action="store_true", help="release even a holder judged alive")

    init = sub.add_parser("init", help="create or update the labels")
    _common(init)

    pause = sub.add_parser("pause", help="pause the queue: runs claim nothing until resume")
    _common(pause)
    pause.add_argument("--reason", metavar="TEXT", help="why; shown by run, status and on GitHub")
    resume = sub.add_parser("resume", help="resume a paused queue")
    _common(resume)
    return parser


def _label_name(text: str) -> str:
    if not text.strip() or "," in text or len(text) > LABEL_MAX:
        raise argparse.ArgumentTypeError(
            f"a label name has no commas and 1-{LABEL_MAX} characters, got {text!r}"
        )
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
    return [
        GitHubRepo(name, token, api_url, app=app, retry_for=budget, record_key=key, trusted_logins=trusted)
        for name in names
    ]


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
    from orion_action.services import reconcile, trigger, wrapper

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
        # The command gets GITHUB_TOKEN (documented), never the App's key: with it, any code
        # the command runs could mint tokens for every repository the App is installed on.
        child_env = {k: v for k, v in env.items() if k not in ("ORION_APP_PRIVATE_KEY", "ORION_RECORD_KEY")}
        if len(repos) > 1:
            from orion_action.services.fleet import FleetWrapper

            w: wrapper.Wrapper = FleetWrapper(repos, config, _log, child_env)
        else:
            w = wrapper.Wrapper(repos[0], config, _log, child_env)
        w.actor = args.actor  # every claim checks who queued the issue (services/trigger.py)
        request = wrapper.RunRequest(
            command=cmd, issue=args.issue, stage=args.stage, require=tuple(args.require or ())
        )
        if args.drain:
            return w.drain(request, args.max_runs)
        return w.run(request)
    repos = _connect(args, env, config.trusted_authors)
    if len(repos) > 1:
        from orion_action.services import fleet

        if args.command == "reconcile":
            return fleet.reconcile_fleet(repos, config, _log, env, dry_run=args.dry_run, as_json=args.json)
        return fleet.status_fleet(repos, config, _log, env, as_json=args.json)
    gh = repos[0]
    if args.command == "reconcile":
        return reconcile.reconcile_command(gh, config, _log, env, dry_run=args.dry_run, as_json=args.json)
    if args.command == "status":
        return reconcile.status_command(gh, config, _log, env, as_json=args.json)
    if args.command == "release":
        return reconcile.release_command(gh, config, _log, args.issue, force=args.force)
    if args.command in ("pause", "resume"):
        from orion_action.services import pause

        if args.command == "pause":
            return pause.pause_command(gh, config, _log, args.reason)
        return pause.resume_command(gh, config, _log)
    if args.command == "init":
        from orion_action.services import setup

        return setup.init_command(gh, config, _log)
    raise UsageError(f"unknown command {args.command!r}")  # pragma: no cover


def main(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    args = build_parser().parse_args(argv)
    code = _main(args, env)
    # The composite action execs this process, so it sets the step's exit-code output itself.
    from orion_action.services.wrapper import write_output

    write_output(env, "exit-code", code, _log)
    return code


def _main(args: argparse.Namespace, env: dict[str, str]) -> int:
    try:
        config = load_config(args.config)
        return dispatch(args, config, env)
    except OrionError as exc:
        print(f"orion-action: error: {exc}", file=sys.stderr, flush=True)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return 130
