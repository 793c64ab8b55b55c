"""The demo fleet: a simulated cluster stored like collected data (service), and its ingest job (jobs)."""
