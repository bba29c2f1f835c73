"""Ollama's API on `serve` (`/api/*` and `GET /`), beside OpenAI's: its requests read into the
shared `ApiRequest` (`request.py`, with `options.py` and `messages.py`), its replies written as
NDJSON (`reply.py`), the model described as Ollama lists it (`model.py`), the routes that
generate nothing (`routes.py`), and who holds Ollama's port (`port.py`)."""
