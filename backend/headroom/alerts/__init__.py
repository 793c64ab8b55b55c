"""Alerts: Headroom's thresholds for a team's own Prometheus and Alertmanager."""
