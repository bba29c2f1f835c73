"""What `chat` and `run` settle before the first message: model, plan, weights, engine."""
