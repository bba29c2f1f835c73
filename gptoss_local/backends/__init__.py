"""Engines that turn a conversation into a stream of events: `base.py` is the contract they
keep; each engine is a folder (`llamacpp/` in-process, `ollama/`, `openai/`: a server
elsewhere) that imports none of the others.
"""
