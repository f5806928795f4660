"""Rich renderings shared by the command line and the app (no Textual, no click)."""
