"""A reopened chat shows the citations its answers kept: each as a link to the file and its
lines in the answer, and a Sources line under it; an answer without any shows none."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Markdown
from tui_helpers import AppOn

from gptoss_local.conversation import Citation
from gptoss_local.events import AnswerDelta
from gptoss_local.session.history import History
from gptoss_local.tui.reply_view import ReplyView


async def test_a_reopened_chat_links_its_citations(
    app_on: AppOn, history: History, tmp_path: Path
) -> None:
    note = tmp_path / "notes" / "zebras.md"
    chat = history.create_chat().id
    history.add_user_message(chat, "Why stripes?")
    reply = history.begin_assistant_message(chat).id
    history.record(reply, AnswerDelta("They deter flies 【1†L3】."))
    history.add_citations(reply, [Citation("【1†L3】", str(note), "notes/zebras.md", 4, 4)])
    history.finish_assistant(reply, None)
    history.add_user_message(chat, "Thanks")
    plain = history.begin_assistant_message(chat).id
    history.record(plain, AnswerDelta("You are welcome."))
    history.finish_assistant(plain, None)

    app = app_on([], chat_id=chat)
    async with app.run_test() as pilot:
        await pilot.pause()
        cited, thanked = app.query(ReplyView)
        answer = cited.query_one(".answer", Markdown).source
        assert answer == f"They deter flies [notes/zebras.md:4]({note.as_uri()}#L4)."
        sources = cited.query_one(".sources", Markdown)
        assert sources.display and "notes/zebras.md:4" in sources.source
        assert cited.answer_text == "They deter flies 【1†L3】."  # copied as the model wrote it
        assert not thanked.query_one(".sources", Markdown).display


def test_the_answers_parser_takes_file_links_and_no_scripts() -> None:
    from gptoss_local.tui.file_links import file_link_parser

    def links(text: str) -> list[str]:
        (inline,) = [t for t in file_link_parser().parse(text) if t.type == "inline"]
        return [str(t.attrs["href"]) for t in inline.children or [] if t.type == "link_open"]

    assert links("see [a.md:4](file:///home/u/a.md#L4)") == ["file:///home/u/a.md#L4"]
    assert links("[x](javascript:alert(1))") == []
    assert links("[web](https://example.org)") == ["https://example.org"]
