"""`python -m gptoss_local` runs the same CLI as the `gptoss-local` command."""

import sys

from gptoss_local.cli import main

sys.exit(main())
