"""Scripts that write checked-in files from their sources (tools/README.md lists them): run from
the repository root as `python -m tools.<name>`. Not part of the installed package."""
