"""What `run`, `serve`, `bench` and `chat` settle before the model loads: plan, weights, engine."""
