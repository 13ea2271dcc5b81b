"""One home for every format raydiag reads: tool output, API answers and recorded files.

Each format has one reader module here, learned from the tool's own formatter, and every path
that meets the format uses it: a pasted ``ray status`` and the same status read from a live
dashboard go through :mod:`bot.read.ray_status_text`; a scheduler message from a live event and
one quoted in a paste through :mod:`bot.read.scheduler_message`. ``bot.snapshot`` holds the models
these readers build; it reads nothing itself.

- **Block readers of a paste** keep the contract of :mod:`bot.read.protocol` and are listed, in
  the order the paste is walked, in :data:`bot.read.readers.READERS`; :mod:`bot.read.scan` walks
  a paste with them, and :mod:`bot.read.loose_lines` reads the lines no block claims.
- **Grammars** shared by block readers and live collectors: Ray's status text
  (``ray_status_text``) and resource notations (``ray_notation``, ``quantity``), the autoscaler's
  messages (``autoscaler_text``), the scheduler's (``scheduler_message``).
- **Structured answers**: Kubernetes JSON (``kubernetes_json``), Ray's dashboard and state API
  (``ray_json``, ``ray_fields``, ``ray_cluster_status``), and snapshot files (``snapshot_file``).

Nothing is imported here, so a module that needs one grammar does not load every reader.
"""
