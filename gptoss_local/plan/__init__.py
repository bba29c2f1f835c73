"""Which model runs how on this PC: the planner, its memory and speed estimates, its words."""
