"""Scoring and reporting: metrics (value and equation accuracy, verification by depth, completion ranking, the
symbolic task's beam-width reports), tables, CSV, JSON, plots. Takes predictions or a loaded solver; never imports
``training``."""
