"""The status bar: model, context use, the last reply's speed, effort, placement, VRAM, backend.

Ordered by how often people look: the figures that change with every reply come right after the
model's name. Each fact is a reactive field: setting one redraws the bar (as toolong's
`LogFooter` does), so nobody has to ask for a refresh. The bar reads live VRAM itself
(`chat.vram_poller.VramPoller`, each read on a thread worker) while a GPU answers.

The bar serves 80 columns whole: when its line does not fit, the facts take their short forms
(the context as a percentage, narrower separators) on up to two lines, and only on a terminal
narrower still are the least important facts left out (`lines`), the model's name and the
context last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from textual import on
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.chat.vram_poller import VramPoller
from gptoss_local.hardware.vram import VramMonitor, VramUse
from gptoss_local.i18n import N_, _, translate
from gptoss_local.kinds import effort_word
from gptoss_local.tui.messages import VramMeasured

WARN_FRACTION = 0.8  # warn when the conversation fills this much of the context
LOADING = N_("loading the model…")
SEPARATOR, NARROW_SEPARATOR = "  ·  ", " · "
MAX_LINES = 2


@dataclass(frozen=True)
class Fact:
    """One fact of the bar: its `text`, its `short` form for a narrow bar ("" leaves it out
    there), and how much it matters (`rank`: the lowest is left out first)."""

    text: str
    short: str
    rank: int


def lines(facts: list[Fact], width: int) -> list[str]:
    """The bar's lines in `width` cells (0: unknown, one full line): the full forms on one line
    if they fit, else the short forms on up to `MAX_LINES` lines, leaving out the least
    important facts until they fit (a single fact wider than the bar is cut when drawn)."""
    full = SEPARATOR.join(fact.text for fact in facts)
    if not width or cell_len(full) <= width:
        return [full]
    kept = [fact for fact in facts if fact.short]
    while len(kept) > 1:
        packed = _pack([fact.short for fact in kept], width)
        if len(packed) <= MAX_LINES:
            return packed
        kept.remove(min(kept, key=lambda fact: fact.rank))
    return [fact.short for fact in kept]


def _pack(texts: list[str], width: int) -> list[str]:
    """`texts` in order, as many on each line as fit in `width` cells."""
    packed: list[str] = []
    for text in texts:
        if packed and cell_len(packed[-1] + NARROW_SEPARATOR + text) <= width:
            packed[-1] += NARROW_SEPARATOR + text
        else:
            packed.append(text)
    return packed


def _placement(info: BackendInfo) -> Fact:
    """Where the model runs; a shared engine's address is left out of the short form, so that
    the bar of a chat over the engine keeps to one line of 80 columns where a local one does."""
    return Fact(info.placement, _("shared engine") if info.shared else info.placement, 6)


class StatusBar(Widget):
    """One line of facts about the model and the last reply (two on a narrow terminal).

    Args:
        effort: The open chat's reasoning effort.
        vram: Reads VRAM use; None shows no VRAM field.
    """

    DEFAULT_CSS = """
    StatusBar {
        height: auto; padding: 0 1; background: $panel; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    StatusBar.-warning { background: $warning-muted; color: $text; }
    """

    info: reactive[BackendInfo | None] = reactive(None)  # what is loaded; None until then
    stats: reactive[Stats | None] = reactive(None)  # of the open chat's last reply
    effort = reactive("medium")
    vram: reactive[VramUse | None] = reactive(None)  # live; None without a GPU
    note = reactive("")
    waiting = reactive("")  # instead of the model until it is loaded ("" says loading)

    def __init__(self, effort: str, vram: VramMonitor | None = None) -> None:
        super().__init__()
        self.set_reactive(StatusBar.effort, effort)
        self.poller = VramPoller(vram, lambda use: self.post_message(VramMeasured(use)),
                                 self._read_in_worker)  # fmt: skip
        self._timer: Timer | None = None

    @property
    def polling(self) -> bool:
        """Whether VRAM is still read now and then."""
        return self._timer is not None

    def on_mount(self) -> None:
        if self.poller.active:
            self._timer = self.set_interval(self.poller.interval, self.poller.poll)
            self.poller.poll()

    def on_unmount(self) -> None:
        self.poller.close()  # NVML is shut down with the bar

    def _read_in_worker(self, read: Callable[[], None]) -> None:
        self.run_worker(read, thread=True, group="vram", exit_on_error=False)

    @on(VramMeasured)
    def _measured(self, message: VramMeasured) -> None:
        if message.use is None and self._timer is not None:  # no more reads come
            self._timer.stop()
            self._timer = None
        self.vram = message.use

    def _context_use(self) -> tuple[int, int]:
        """(used, size) of the context; size 0 when unknown."""
        info, stats = self.info, self.stats
        # The loaded model's context, not the one a saved chat's last reply was written with.
        size = info.context_size if info else 0
        size = size or (stats.context_size if stats else 0)
        return (stats.context_used if stats else 0), size

    def _near_full(self) -> bool:
        used, size = self._context_use()
        return bool(size) and used >= WARN_FRACTION * size

    def _changed(self) -> None:
        self.set_class(self._near_full(), "-warning")
        if len(lines(self.facts(), self.size.width)) != self.size.height:
            self.refresh(layout=True)  # another number of lines: the screen makes room

    watch_info = watch_stats = watch_effort = watch_vram = watch_note = watch_waiting = _changed

    def facts(self) -> list[Fact]:
        """What the bar says, in the order it says it."""
        info, stats = self.info, self.stats
        name = info.model if info else (self.waiting or translate(LOADING))
        facts = [Fact(name, name, 9)]
        used, size = self._context_use()
        if size:
            percent = used * 100 // size
            short = _("context {percent} %").format(percent=percent)
            if self._near_full():  # first, and in place of the short form: it says as much
                warning = _("⚠ context {percent} % full").format(percent=percent)
                facts.insert(0, Fact(warning, warning, 10))
                short = ""
            facts.append(Fact(_("context {used:,}/{size:,}").format(used=used, size=size),
                              short, 8))  # fmt: skip
        if stats and stats.ttft_seconds is not None:
            ttft = _("TTFT {seconds:.2f}s").format(seconds=stats.ttft_seconds)
            facts.append(Fact(ttft, ttft, 1))
        if stats and stats.decode_tokens_per_second:
            speed = _("{speed:.0f} tok/s").format(speed=stats.decode_tokens_per_second)
            facts.append(Fact(speed, speed, 3))
        if stats and stats.draft_tokens:  # speculative decoding: how many drafts were kept
            kept = stats.accepted_tokens * 100 // stats.draft_tokens
            drafts = _("drafts {kept} % kept").format(kept=kept)
            facts.append(Fact(drafts, _("drafts {kept} %").format(kept=kept), 1))
        effort = _("effort {effort}").format(effort=effort_word(self.effort))
        facts.append(Fact(effort, effort, 7))
        if info is not None:
            facts.append(_placement(info))
        if self.vram is not None:  # also while loading: the user sees the model arrive
            facts.append(Fact(self.vram.text(), self.vram.short(), 4))
        if info is not None:  # a shared engine's client says where it is, not how it talks
            facts.append(Fact(info.backend, "" if info.shared else info.backend, 5))
        if self.note:
            facts.append(Fact(self.note, self.note, 2))
        return facts

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line, or two where the facts need them (`lines`)."""
        return len(lines(self.facts(), width))

    def render(self) -> Content:
        """The lines, from the current facts (Content: a model's name is never markup)."""
        return Content("\n".join(lines(self.facts(), self.size.width)))
