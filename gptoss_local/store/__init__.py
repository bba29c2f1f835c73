"""Downloaded model files: checking them before llama.cpp reads them."""
