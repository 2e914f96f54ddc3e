"""`python -m benchmarks.overhead` (what `make bench` runs)."""

import sys

from benchmarks.overhead.run import main

sys.exit(main())
