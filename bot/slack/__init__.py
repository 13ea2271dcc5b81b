"""The Slack bot: thin Bolt listeners that trigger diagnoses and probes and hand results to deliver."""
