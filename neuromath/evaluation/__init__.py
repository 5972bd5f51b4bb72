"""Scoring and reporting: metrics over predictions (value and equation accuracy, verification by depth, completion
ranking, beam-width reports of the symbolic task), report tables, CSV, JSON and plots. Takes predictions or a
loaded solver; never trains and never imports ``training``."""
