"""Scheduled health posts: a cron per channel and cluster, posting only when there is news.

``decide`` (pure) says whether a run posts, edits its last post or stays quiet; ``ScheduledPosts``
runs one schedule (claim the run, collect, classify, decide, render, deliver, remember);
``HealthScheduler`` fires the runs with APScheduler, its jobs kept in the state database.
"""
