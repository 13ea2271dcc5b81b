"""The corpus a team grows from its own Slack: ``raydiag corpus export`` (see ``export``).

Above the state store and the paste readers, beside the other commands that read the bot's
database from a terminal (the quiz): it writes files, and nothing in the bot imports it.
"""
