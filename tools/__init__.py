"""Tools of the repository, run from a checkout and not shipped in the wheel (``pyproject.toml`` packages only
``neuromath``)."""
