"""``python -m parafeed`` runs the command line."""

import sys

from parafeed.cli import main

sys.exit(main())
