"""Local model files: pull (resume, verify, mirrors), reuse, list, verify, remove, GGUF checks."""
