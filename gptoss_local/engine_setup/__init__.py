"""`gptoss-local engine install --cuda`: plan, run and check a CUDA build of llama-cpp-python."""
