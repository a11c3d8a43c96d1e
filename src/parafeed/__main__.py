"""``python -m parafeed`` runs the command line."""

import sys

from parafeed.tools.cli import main

sys.exit(main())
