"""`python -m benchmarks.strategies` (part of `make bench`)."""

import sys

from benchmarks.strategies.run import main

sys.exit(main())
