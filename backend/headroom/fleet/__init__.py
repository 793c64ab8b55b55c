"""The fleet overview: every cluster of the organisation with its health, nearest ceiling, spend and savings."""
