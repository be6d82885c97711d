"""GitHub Actions' runner interface: step summary, outputs and annotations (all files or
stdout workflow commands). Outside Actions every function here is a no-op. `ActionsRunner` is
the `ports.RunnerPort` over one environment that cli.py gives the services."""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


def in_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def this_workflow(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(owner/name, workflow file) from `GITHUB_WORKFLOW_REF`
    (`octo/repo/.github/workflows/reconcile.yml@refs/heads/main`); None outside Actions or
    when the variable is not of that shape."""
    if not in_actions(env):
        return None
    ref = env.get("GITHUB_WORKFLOW_REF", "").partition("@")[0]
    owner, _, rest = ref.partition("/")
    name, _, path = rest.partition("/")
    folder, _, file = path.rpartition("/")
    if not (owner and name and folder == ".github/workflows" and file):
        return None
    return f"{owner}/{name}", file


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def warning(env: Mapping[str, str], message: str, title: str = "orion-action") -> str | None:
    """A `::warning::` annotation line, or None outside Actions (the caller prints it)."""
    if not in_actions(env):
        return None
    return f"::warning title={_escape_property(title)}::{_escape_data(message)}"


def error(env: Mapping[str, str], message: str, file: str | None = None, line: int | None = None,
          title: str = "orion-action") -> str | None:
    """An `::error::` annotation line (on `file`, at `line`, when given), or None outside
    Actions (the caller prints it): the Actions UI shows it on the run's summary page."""
    if not in_actions(env):
        return None
    where = f"file={_escape_property(file)}," if file else ""
    where += f"line={line}," if file and line else ""
    return f"::error {where}title={_escape_property(title)}::{_escape_data(message)}"


@contextlib.contextmanager
def group(env: Mapping[str, str], title: str) -> Iterator[None]:
    """Fold what is printed inside into one collapsible `::group::` of the job's log (in
    Actions only); the group ends however the block does."""
    if not in_actions(env):
        yield
        return
    print(f"::group::{_escape_data(title)}", flush=True)
    try:
        yield
    finally:
        print("::endgroup::", flush=True)


def set_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Append step outputs to $GITHUB_OUTPUT; multi-line values use a random delimiter."""
    text = ""
    for key, value in outputs.items():
        if "\n" in value:
            delim = f"ORION_{secrets.token_hex(8)}"
            text += f"{key}<<{delim}\n{value}\n{delim}\n"
        else:
            text += f"{key}={value}\n"
    what = f"the {next(iter(outputs))} output" if len(outputs) == 1 else f"the outputs {', '.join(outputs)}"
    _append(env, "GITHUB_OUTPUT", text, what)


def add_summary(env: Mapping[str, str], markdown: str) -> None:
    _append(env, "GITHUB_STEP_SUMMARY", markdown.rstrip("\n") + "\n", "the step summary")


def _append(env: Mapping[str, str], variable: str, text: str, what: str) -> None:
    """Append to the runner file that `variable` names, if any. The runner's files are not
    ours to trust (a directory, a full disk, a path in a missing directory): a failure is one
    line on stderr, never the end of a command whose real work is done. Text that cannot be
    encoded (a lone surrogate from an issue's title) is replaced, not fatal."""
    path = env.get(variable)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8", errors="replace") as f:
            f.write(text)
    except OSError as exc:
        print(f"orion-action: could not write {what} to ${variable}: {exc.strerror or exc}",
              file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ActionsRunner:
    """The runner's files and log commands named by one environment (ports.RunnerPort)."""

    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def in_actions(self) -> bool:
        return in_actions(self.env)

    @property
    def server_url(self) -> str:
        return self.env.get("GITHUB_SERVER_URL") or "https://github.com"

    def group(self, title: str) -> contextlib.AbstractContextManager[None]:
        return group(self.env, title)

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        set_outputs(self.env, outputs)

    def add_summary(self, markdown: str) -> None:
        add_summary(self.env, markdown)

    def has_summary(self) -> bool:
        return bool(self.env.get("GITHUB_STEP_SUMMARY"))

    def warning(self, message: str, title: str = "orion-action") -> None:
        annotation = warning(self.env, message, title)
        if annotation:
            print(annotation, flush=True)

    def error(self, message: str, file: str | None = None, line: int | None = None) -> None:
        annotation = error(self.env, message, file=file, line=line)
        if annotation:
            print(annotation, flush=True)

    def this_workflow(self) -> tuple[str, str] | None:
        return this_workflow(self.env)
