"""``python -m autogradcli.cli``: the same as ``agrad``."""

import sys

from . import main

sys.exit(main())
