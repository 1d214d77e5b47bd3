"""The bundle's entry script: PyInstaller needs a file to start from, not `python -m ui`.

It imports the installed `ui` package (from the build venv, never the source tree) and hands
over to the same `main()` that the `continuo` gui-script runs, so the bundle and a source run
start identically.
"""

import sys

from ui.app import main

if __name__ == "__main__":
    sys.exit(main())
