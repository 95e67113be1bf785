"""The bundled common-instancetypes catalogue (cluster instance types and preferences; see NOTICE)."""
from pathlib import Path

CATALOG_DIR = Path(__file__).resolve().parent
