"""Delivering rendered diagnoses: posting to Slack with retries and a plain-text fallback."""
