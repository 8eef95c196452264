import sys

from collsynth.cli import main

sys.exit(main())
