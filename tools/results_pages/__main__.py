"""``python -m tools.results_pages build [--check]``: see ``tools.results_pages.command``."""

import sys

from tools.results_pages.command import main

sys.exit(main())
