"""Collectors: each turns one source (live APIs, a snapshot file, pasted text) into a Snapshot."""
