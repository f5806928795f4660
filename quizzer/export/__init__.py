"""Export the bank to Anki: an .apkg deck or a CSV file Anki imports directly."""
