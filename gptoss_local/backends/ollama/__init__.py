"""The Ollama engine: `backend.OllamaBackend` talks to a daemon on loopback (`daemon`, which
finds, probes or starts one), opened by the engine registry (`launch/`).
"""
