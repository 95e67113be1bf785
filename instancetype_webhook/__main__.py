import sys

from instancetype_webhook.cli import main

sys.exit(main())
