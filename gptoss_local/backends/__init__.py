"""Engines that turn a conversation into a stream of events: llama.cpp in-process, Ollama."""
