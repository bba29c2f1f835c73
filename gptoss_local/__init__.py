"""gptoss-local: OpenAI's gpt-oss models, private and offline, on an NVIDIA RTX PC."""

__version__ = "0.1.0"
