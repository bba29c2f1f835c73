"""`gptoss-local serve`: the loaded model behind an OpenAI-compatible HTTP API.

`server.py` is the HTTP layer (stdlib `ThreadingHTTPServer`), `guard.py` its rules (loopback
unless a key is set, the Host header, CORS only when asked), `service.py` the routes;
`apis.py` holds one object per API: `chat_request.py` / `responses_request.py` read its JSON
into an `ApiRequest` (`api_request.py`, with the fields both share in `fields.py`, the
answer's format in `formats.py`, the tool choice in `choice.py`, the model's names in
`model_names.py`), `generation.py` runs it on the backend (stop strings applied, a cut call
left out, a formatted answer checked), `chat_reply.py` / `responses_reply.py` write its events
back as JSON or server-sent events (`sse.py`), and `scheduler.py` starts concurrent requests
in arrival order, as many at once as the backend decodes together. Each conversation keeps
its own cached prefix between turns (the backend's sequences, and its state shelf in RAM);
`capacity.py` says how many replies run at once and how much RAM the shelf gets.
"""
