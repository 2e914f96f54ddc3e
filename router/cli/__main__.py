"""`python -m router.cli …`, as the image's entrypoint runs it."""

import sys

from router.cli import main

sys.exit(main())
