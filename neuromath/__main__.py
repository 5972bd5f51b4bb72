"""``python -m neuromath``: the command line of the ``neuromath`` script. A multi-process run started this way has
each further process started the same way by Lightning's launcher."""

import sys

from neuromath.cli import main

if __name__ == "__main__":
    sys.exit(main())
