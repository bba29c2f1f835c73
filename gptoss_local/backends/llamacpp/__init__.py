"""The in-process llama.cpp engine (llama-cpp-python's C API): `backend.LlamaCppBackend`,
opened by the engine registry (`launch/`) with `options.LlamaOptions` and `load.LoadSettings`.
Nothing outside this folder imports its other modules (tests/test_architecture.py).
"""
