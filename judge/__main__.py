"""`python -m judge …`: the same commands as `tandem judge …`."""

import sys

from judge.cli import main

sys.exit(main())
