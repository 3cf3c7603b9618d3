"""The client's tests: `python3 -m unittest discover -s tests -t .` in clients/python (GLIGABAO_URL for the server tests)."""
