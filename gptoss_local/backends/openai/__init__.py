"""The client engine: `backend.OpenAIClientBackend` streams from an OpenAI-compatible server
elsewhere, opened by the engine registry (`launch/`).
"""
