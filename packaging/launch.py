"""The bundle's entry script: PyInstaller needs a file to start from, not `python -m ui`.

It imports the installed `ui` package (from the build venv, never the source tree) and hands
over to the same `main()` that the `continuo` gui-script runs, so the bundle and a source run
start identically.

Started with ``--continuo-attach-worker`` it is instead the child that reads an attached file
(`engine.attach._worker`: the bundle has no Python interpreter to run it with), and never
imports the window.
"""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["--continuo-attach-worker"]:
        from engine.attach._worker import main as read_attachment

        sys.exit(read_attachment())
    from ui.app import main

    sys.exit(main())
