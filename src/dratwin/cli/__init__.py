"""The dratwin command line."""
