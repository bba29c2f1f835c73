"""OpenAI's Codex CLI: a profile of its own (`codex_profile`), chosen with `--profile`. Codex's
own config.toml is never touched; a profile file of the user's by the same name is copied
aside first."""

from __future__ import annotations

from gptoss_local.agents.agent import Agent, Configured, Served, Start
from gptoss_local.agents.codex_profile import PROFILE, Written, codex_home, write_profile
from gptoss_local.agents.files import AgentConfigError
from gptoss_local.i18n import _


def _written(served: Served) -> Written:
    try:
        return write_profile(served)
    except OSError as exc:
        raise AgentConfigError(_("cannot write Codex's profile into {folder}: {error}").format(
            folder=codex_home(), error=exc.strerror or exc)) from None  # fmt: skip


def _notes(written: Written) -> tuple[str, ...]:
    if written.backup is None:
        return ()
    return (_("{path} was not written by gptoss-local: your file is kept as {backup}, and "
              "gptoss-local's profile takes its place. To use yours with Codex, rename the "
              "copy to NAME.config.toml and run `codex --profile NAME`.").format(
                  path=written.path, backup=written.backup),)  # fmt: skip


def prepare(served: Served) -> Start:
    """Write the profile; Codex starts with `--profile gptoss-local`."""
    return Start(argv=("--profile", PROFILE), notes=_notes(_written(served)))


def configure(served: Served) -> Configured:
    """The same profile, for `codex --profile gptoss-local` started by hand."""
    written = _written(served)
    return Configured(written.path, _notes(written))


def restore() -> str | None:
    """Take gptoss-local's profile away, and put back the newest copy of a profile of the
    user's that it replaced."""
    home = codex_home()
    profile = home / f"{PROFILE}.config.toml"
    ours = [p for p in (profile, home / f"{PROFILE}.models.json") if p.exists()]
    copies = sorted(home.glob(f"{PROFILE}.config.toml.bak-*"), key=lambda p: p.stat().st_mtime)
    if not ours and not copies:
        return None
    for path in ours:
        path.unlink()
    if copies:
        copies[-1].replace(profile)
        return _("put your {path} back (from {backup})").format(path=profile, backup=copies[-1])
    return _("removed gptoss-local's Codex profile {path}").format(path=profile)


AGENT = Agent(
    name="codex",
    title="Codex CLI",
    install="npm i -g @openai/codex",
    min_context=32_768,  # Codex's instructions, tools and command outputs need room
    prepare=prepare,
    configure=configure,
    restore=restore,
    started_with=f"codex --profile {PROFILE}",
)
