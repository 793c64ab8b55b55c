"""Inventory: instances, volumes, nodes, and the one limits resolver everybody uses (inventory.limits)."""
