"""Schema migrations with Alembic, run by `casefile serve` and `casefile migrate`."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from casefile.settings import Settings

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    config.attributes["settings"] = settings
    return config


def upgrade(settings: Settings) -> None:
    """Bring the database to the newest schema. Safe to run from several processes at once."""
    settings.ensure_data_dir()
    command.upgrade(alembic_config(settings), "head")
