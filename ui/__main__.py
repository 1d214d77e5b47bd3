"""``python -m ui``: start Continuo (see `ui.app.main`)."""

import sys

from ui.app import main

sys.exit(main())
