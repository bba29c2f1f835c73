"""`doctor`: what was found and planned, as a report (JSON-ready) or as text."""
