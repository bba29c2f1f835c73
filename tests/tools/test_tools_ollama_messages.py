"""The built-in python tool through Ollama's API: offered as a function named `python` taking its
code (Ollama's gpt-oss template renders a function of that name as the built-in), and past
calls sent back with their code."""

from __future__ import annotations

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.ollama.messages import chat_request
from gptoss_local.conversation import BuiltinTool, Conversation, Message, ToolCallRecord


def test_python_is_offered_as_a_function_with_code() -> None:
    python = BuiltinTool("python", "Runs code.")
    call = ToolCallRecord("python", "print(1)", "analysis")
    conversation = Conversation(
        (Message("user", "hi"), Message("assistant", tool_calls=(call,)),
         Message("tool", "1\n", tool_name="python")),
        builtin_tools=(python,),
    )  # fmt: skip
    request = chat_request(conversation, GenerationSettings(), 4096)
    (tool,) = request["tools"]
    assert tool["function"]["name"] == "python"
    assert tool["function"]["parameters"]["required"] == ["code"]
    assistant = request["messages"][1]
    assert assistant["tool_calls"] == [
        {"function": {"name": "python", "arguments": {"code": "print(1)"}}}
    ]
    assert request["messages"][2] == {"role": "tool", "content": "1\n", "tool_name": "python"}
